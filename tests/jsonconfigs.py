"""Hypothesis strategies for JSON config texts as people and programs write them:
numbers of every form and size, every escape (lone surrogates included), non-ASCII
text, deep nesting, duplicate keys, any indentation, CRLF, no final newline.

A text is built from a tree whose numbers and strings are kept as the exact text to
write, so what the tests compare is bytes, never values re-rendered by Python.
"""

from __future__ import annotations

from hypothesis import strategies as st

NUMBERS = st.one_of(
    st.integers(min_value=-(10 ** 40), max_value=10 ** 40).map(str),
    st.sampled_from(["1e400", "-1e400", "1e2", "1E+2", "1.10", "0.0", "-0", "-0.0e-0", "12345678901234567890",
                     "2.5e-324", "1.7976931348623157e309", "9" * 400]),
    st.builds(lambda i, f, e: i + f + e,
              st.from_regex(r"-?(0|[1-9][0-9]{0,5})", fullmatch=True),
              st.from_regex(r"(\.[0-9]{1,6})?", fullmatch=True),
              st.from_regex(r"([eE][+-]?[0-9]{1,4})?", fullmatch=True)),
)

_ESCAPES = st.sampled_from(['\\"', "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\ud800", "\\udfff",
                            "\\ud83d\\ude00", "\\u0000", "\\u00e9", "\\u2028", "\\uDBFF"])
_HEX_ESCAPE = st.integers(min_value=0, max_value=0xFFFF).map(lambda n: f"\\u{n:04x}")
_RAW = st.characters(blacklist_categories=("Cs",), blacklist_characters='"\\').filter(lambda c: ord(c) >= 0x20)
STRINGS = st.lists(st.one_of(_RAW, _ESCAPES, _HEX_ESCAPE), max_size=8).map(lambda parts: '"' + "".join(parts) + '"')
KEYS = st.one_of(STRINGS, st.sampled_from(['"model"', '"env"', '"hooks"', '"mcpServers"', '"mcp"', '"Zoë"', '""']))

LEAVES = st.one_of(NUMBERS.map(lambda t: ("raw", t)), STRINGS.map(lambda t: ("raw", t)),
                   st.sampled_from(["true", "false", "null"]).map(lambda t: ("raw", t)))


def _containers(children):
    return st.one_of(
        st.lists(children, max_size=4).map(lambda items: ("array", items)),
        st.lists(st.tuples(KEYS, children), max_size=4).map(lambda members: ("object", members)),
    )


VALUES = st.recursive(LEAVES, _containers, max_leaves=12)


def _raw(text: str):
    return ("raw", text)


def _command(text: str):
    import json

    return _raw(json.dumps(text))


# Things already in a harness config that lichhook's entries must live beside.
HANDLERS = st.builds(lambda command, extra: ("object", [('"type"', _raw('"command"')), ('"command"', command)] + extra),
                     st.sampled_from(["notify-send done", "echo hi", "./guard.sh", "lichhook-like but not ours"]).map(_command),
                     st.lists(st.tuples(KEYS, LEAVES), max_size=2))
GROUPS = st.builds(lambda matcher, handlers: ("object", matcher + [('"hooks"', ("array", handlers))]),
                   st.sampled_from([[], [('"matcher"', _raw('"startup"'))], [('"matcher"', _raw('""'))]]),
                   st.lists(HANDLERS, max_size=2))
EVENT_LISTS = st.one_of(st.lists(GROUPS, max_size=2), st.lists(HANDLERS, max_size=2)).map(lambda items: ("array", items))
HOOK_TABLES = st.lists(st.tuples(st.sampled_from(['"SessionStart"', '"Stop"', '"PreToolUse"', '"PreInvocation"',
                                                  '"UserPromptSubmit"']), EVENT_LISTS), max_size=3
                       ).map(lambda members: ("object", members))
SERVER_TABLES = st.lists(st.tuples(st.sampled_from(['"docs"', '"other"', '"x"']),
                                   st.builds(lambda c: ("object", [('"command"', c)]), STRINGS.map(_raw))),
                         max_size=2).map(lambda members: ("object", members))


@st.composite
def configs(draw) -> tuple:
    """A top-level JSON object as a tree: random members, maybe a hooks table, maybe MCP
    server tables, in any order, duplicate keys allowed."""
    members = draw(st.lists(st.tuples(KEYS, VALUES), max_size=4))
    extra = []
    if draw(st.booleans()):
        extra.append(('"hooks"', draw(HOOK_TABLES)))
    for table in ('"mcpServers"', '"mcp"'):
        if draw(st.booleans()):
            extra.append((table, draw(SERVER_TABLES)))
    members += extra
    order = draw(st.permutations(range(len(members))))
    return ("object", [members[i] for i in order])


class Layout:
    """How a text is laid out: indent unit (None: all on one line), line ending, spacing."""

    def __init__(self, indent, newline: str, colon: str, comma: str, final_newline: bool, inner: str) -> None:
        self.indent, self.newline, self.colon, self.comma = indent, newline, colon, comma
        self.final_newline, self.inner = final_newline, inner


LAYOUTS = st.builds(Layout, st.sampled_from([None, "  ", "    ", "\t", " "]), st.sampled_from(["\n", "\r\n"]),
                    st.sampled_from([": ", ":", " : "]), st.sampled_from([", ", ","]), st.booleans(),
                    st.sampled_from(["", " "]))


def render(tree, layout: Layout, depth: int = 0) -> str:
    kind = tree[0]
    if kind == "raw":
        return tree[1]
    items = tree[1]
    opening, closing = ("{", "}") if kind == "object" else ("[", "]")
    if not items:
        return opening + layout.inner + closing
    if kind == "object":
        parts = [key + layout.colon + render(value, layout, depth + 1) for key, value in items]
    else:
        parts = [render(value, layout, depth + 1) for value in items]
    if layout.indent is None:
        return opening + layout.inner + layout.comma.join(parts) + layout.inner + closing
    pad, close_pad = layout.newline + layout.indent * (depth + 1), layout.newline + layout.indent * depth
    return opening + pad + ("," + pad).join(parts) + close_pad + closing


def text_of(tree, layout: Layout) -> str:
    text = render(tree, layout)
    return text + layout.newline if layout.final_newline else text
