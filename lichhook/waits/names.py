"""Caller names, ``who@node``, and this machine's node. Pure apart from reading the host name."""

import os

from lichhook.ids import BadId, wait_node, wait_who

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping, Tuple


def host_name() -> str:
    """This machine's host name as the OS reports it (not yet checked or lower-cased)."""
    if hasattr(os, "uname"):
        return os.uname().nodename  # free, where socket would cost about 10 ms to import
    import socket

    return socket.gethostname()


def this_node(environ: "Mapping[str, str]" = os.environ) -> str:
    """LICHHOOK_NODE if set, else the host name; lower-cased and checked. Raises BadId."""
    chosen = environ.get("LICHHOOK_NODE", "")
    if chosen.strip():
        try:
            return wait_node(chosen)
        except BadId as exc:
            raise BadId(f"LICHHOOK_NODE is not usable: {exc}; set it to this machine's host "
                        "name, or unset it to use the host name, or pass by as who@node") from None
    host = host_name()
    try:
        return wait_node(host)
    except BadId as exc:
        raise BadId(
            f"this machine's host name {host[:64]!r} is not usable as a node ({exc}); "
            "set LICHHOOK_NODE to a host name, or pass by as who@node"
        ) from None


def parse_by(by: object, environ: "Mapping[str, str]" = os.environ) -> "Tuple[str, str]":
    """``(who, node)`` for ``by`` (``who@node``, or a bare ``who`` meaning this node). Raises BadId."""
    if not isinstance(by, str):
        raise BadId("by must be a string such as 'reviewer' or 'reviewer@myhost'")
    who, at, node = by.partition("@")
    wait_who(who)
    if not at:
        return who, this_node(environ)
    return who, wait_node(node)

