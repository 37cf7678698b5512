"""``run_op``: one waits op, from arguments to the JSON-able answer the CLI prints.

Order of work: check the session id, then the name, then the op and its arguments; only
then touch the disk, through ``folder.transaction``: under the store's lock, load the
state, apply the op (or refuse, writing nothing), save the state, bring the mirrors in
line, release the lock.
"""

import os

from lichhook.ids import BadId, wait_session_id
from lichhook.waits.names import parse_by, this_node
from lichhook.waits.rules import OPS, TAKES, Refused, apply

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Mapping


def refusal(op: object, sentence: str, **fields: object) -> dict:
    """A refused op's answer (the MCP tool gives its own refusals in the same shape)."""
    answer: dict = {"ok": False, "op": op[:40] if isinstance(op, str) else None, "error": sentence}
    answer.update(fields)
    return answer


def run_op(
    op: str,
    *,
    by: str,
    session: str,
    what: "str | None" = None,
    family: "str | None" = None,
    id: "str | None" = None,  # noqa: A002 - the argument is named as on the command line
    note: "str | None" = None,
    waits_dir: "str | None" = None,
    environ: "Mapping[str, str]" = os.environ,
) -> dict:
    """Run one waits op and return its answer; never raises.

    Success: ``{"ok": true, "op", "name", "session", ...the op's fields}``. Refusal:
    ``{"ok": false, "op", "error": <sentence>, ...}``, with ``held_by`` when another session
    holds the name. Nothing is written when an op is refused.
    """
    try:
        return _run(op, by, session, {"what": what, "family": family, "id": id, "note": note}, waits_dir, environ)
    except Exception as exc:  # the promise to callers (the MCP server) is an answer, not a traceback
        return refusal(op, f"unexpected error ({type(exc).__name__}: {exc}); nothing was changed by this op")


def _run(op, by, session, given, explicit_dir, environ) -> dict:  # type: ignore[no-untyped-def]
    try:
        session = wait_session_id(session)
        who, node = parse_by(by, environ)
        if op not in OPS:
            raise BadId(f"op {op!r} is not an op; use one of {', '.join(OPS)}")
        args: dict = {}
        if op in TAKES:  # the checks are imported only for the ops that take arguments
            from lichhook.waits.fields import checked

            args = checked(op, given)
    except BadId as exc:
        return refusal(op, str(exc))
    name = f"{who}@{node}"
    answer = {"ok": True, "op": op, "name": name, "session": session}

    from lichhook.paths import waits_dir
    from lichhook.waits.folder import FolderRefused, transaction, utc_now

    folder = os.path.abspath(waits_dir(environ, explicit_dir))
    now = utc_now()
    try:
        here: "str | None" = this_node(environ)
    except BadId:
        here = None  # the index still gets written; its node stays unknown
    try:
        result, warning = transaction(
            folder, lambda state: apply(state, op, name, session, now, **args), here, now, (session,))
    except Refused as refused:
        return refusal(op, refused.sentence, name=name, session=session, **refused.extra)
    except FolderRefused as exc:
        return refusal(op, str(exc), name=name, session=session)
    except OSError as exc:
        where = exc.filename or folder
        return refusal(
            op,
            f"cannot use the waits folder {folder} ({where}: {exc.strerror or exc}); make it writable "
            "by you, or choose another folder with --waits-dir or LICHHOOK_WAITS_DIR",
            name=name,
            session=session,
        )
    answer.update(result)
    if warning:
        # The op is in the store; saying it failed would invite a duplicate retry.
        answer["warning"] = warning
    return answer
