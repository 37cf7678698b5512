"""Reading the LICH_* variables lich puts in every session's environment."""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping

VARIABLES = ("LICH_PORT", "LICH_TOKEN", "LICH_SESSION_ID")


class LichTarget:
    """Where and as whom to report: lich's loopback port, its token and its session id."""

    __slots__ = ("port", "token", "session_id")

    def __init__(self, port: int, token: str, session_id: str) -> None:
        self.port = port
        self.token = token
        self.session_id = session_id

    def __repr__(self) -> str:  # never shows the token
        return f"LichTarget(port={self.port}, session_id={self.session_id!r})"


def parse_port(text: str) -> "int | None":
    """A decimal port 1-65535 written with ASCII digits only, else None."""
    if not (1 <= len(text) <= 5) or not all("0" <= c <= "9" for c in text):
        return None
    port = int(text)
    return port if 1 <= port <= 65535 else None


def lich_target(environ: "Mapping[str, str]") -> "LichTarget | str":
    """The report target, or a sentence saying why this process is not inside lich.

    Every variable must be set and not blank; LICH_PORT must be a decimal port.
    """
    missing = [name for name in VARIABLES if not environ.get(name, "").strip()]
    if missing:
        return "not inside lich: " + ", ".join(missing) + (" is" if len(missing) == 1 else " are") + " unset or blank"
    port = parse_port(environ["LICH_PORT"])
    if port is None:
        text = environ["LICH_PORT"]
        # Echo only what could be a mistyped port: a long value, or one holding the token
        # (variables swapped by mistake), must not put the token in the debug output.
        shown = repr(text) if len(text) <= 12 and environ["LICH_TOKEN"] not in text else f"({len(text)} characters)"
        return f"LICH_PORT {shown} is not a decimal port 1-65535"
    return LichTarget(port, environ["LICH_TOKEN"], environ["LICH_SESSION_ID"])
