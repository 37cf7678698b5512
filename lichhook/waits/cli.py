"""``lichhook wait <op> --by WHO[@NODE] --session SID [...]``: one op, one JSON line.

The options are parsed by hand: argparse would cost this path more than the op itself.
"""

import sys

from lichhook.waits.rules import ARGUMENTS, OPS, WHAT_MAX

USAGE = f"""\
usage: python3 lichhook.pyz wait <op> --by WHO[@NODE] --session SID [--what TEXT]
                                  [--family F] [--id W] [--note TEXT] [--waits-dir DIR]

ops:
  add       open a wait: --what TEXT (1-{WHAT_MAX} characters), optional --family F (e.g. ci.build)
  list      the name's open waits
  watched   a watcher now watches wait --id W (optional --note TEXT); it stays open
  said      the operator has been told about wait --id W (optional --note TEXT); it stays open
  done      close wait --id W
  adopt     bind the name to this session; answers the open waits and the previous session

Prints one JSON object. Exit 0: done; 1: refused ("error" says why); 2: usage error.
The waits folder: --waits-dir, else LICHHOOK_WAITS_DIR, else <user state dir>/waits.
"""

_OPTIONS = {f"--{name}": name for name in ("by", "session", *ARGUMENTS)}
_OPTIONS["--waits-dir"] = "waits_dir"


class UsageError(Exception):
    pass


def parse(argv: list) -> tuple:
    """``(op, options)`` from the command line; raises UsageError."""
    op = None
    options: dict = {}
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if word.startswith("--"):
            key, eq, value = word.partition("=")
            if key not in _OPTIONS:
                raise UsageError(f"unknown option {key[:40]!r}")
            if not eq:
                if i >= len(argv):
                    raise UsageError(f"{key} needs a value")
                value = argv[i]
                i += 1
            field = _OPTIONS[key]
            if field in options:
                raise UsageError(f"{key} is given twice")
            options[field] = value
        elif op is None:
            if word not in OPS:
                raise UsageError(f"unknown op {word[:40]!r}; use one of {', '.join(OPS)}")
            op = word
        else:
            raise UsageError(f"unexpected argument {word[:40]!r} (quote text with spaces)")
    if op is None:
        raise UsageError("no op given")
    for required in ("--by", "--session"):
        if _OPTIONS[required] not in options:
            raise UsageError(f"{op} needs {required}")
    return op, options


def main(argv: list) -> int:
    if any(a in ("-h", "--help") for a in argv[:1]) or argv == ["help"]:
        sys.stdout.write(USAGE)
        return 0
    try:
        op, options = parse(argv)
    except UsageError as exc:
        _write(sys.stderr, f"lichhook wait: {exc}\n\n{USAGE}")
        return 2
    from lichhook.waits.api import run_op

    answer = run_op(op, **options)
    from lichhook.coldstart import quickjson as json  # json's results without its import (see there)

    _write(sys.stdout, json.dumps(answer) + "\n")
    return 0 if answer.get("ok") else 1


def _write(stream, text: str) -> None:  # type: ignore[no-untyped-def]
    # A process started with the stream closed has None here: the op stands all the same,
    # and its exit status still says how it went.
    if stream is not None:
        stream.write(text)
