"""A harness memory file's text as a memory: its YAML front matter, its body, verbatim.

Claude Code's memory files are markdown with YAML front matter (docs/architecture.md,
Import): `name`, `description` and `type` at the top level, or `type` (and
`originSessionId`, `modified`) under `metadata:`. A file without front matter is still a
memory (its name is the file's name); front matter YAML cannot parse is retried with its
values quoted, else the whole text is the body, and noted.

YAML gives the structure (which key holds which value, where each starts and ends); a value
is the text written in the file, never what YAML would make of it (#30 point 4). People and
models write these files as text, so `#47 closed` after ` ` is not a comment, nor `&`, `!`,
`*`, `null`, `~`, `yes`, `007` or `2026-03-24` anything but those characters. Each form:

- plain (unquoted, and any value that starts with an anchor, tag or alias): the characters
  from its first to the end of its last line (but trailing whitespace), a ` #` and what
  follows included; a value
  continued on more lines keeps its line breaks, each later line without its indentation;
- quoted (`"..."`, `'...'`): what YAML means by the quotes, escapes (`\n`, `\"`) and `''`
  read, the quotes not part of it; what follows the closing quote is YAML's (a comment);
- block (`|`, `>`, with any indicators): its lines as written, the block's indentation
  removed, line breaks kept (a `>` block is not folded), without a final line break;
- a collection (`[a, b]`, or an indented list): its text as written, a comment after a flow
  collection included;
- nothing after `key:` but what YAML reads as a comment (`description: #47 closed`): that
  text; nothing at all: no value (the file name or first line stands in).

A character YAML does not allow in a stream at all (a C1 control, U+FFFE...), or reads as a
line break where the file's lines do not break (NEL, U+2028, U+2029, a lone CR), is read as
U+FFFD for the structure and kept as written in the value; inside quotes, where YAML would
have refused or folded it, the value is then the quoted text as written, quotes and all.
"""

from __future__ import annotations

import bisect
import os
import re
from typing import Protocol

import yaml

from lazy_memory.engine.importing import HarnessMemory, HarnessScan, SkippedFile

_FIRST_FENCE = re.compile(r"---[ \t\r]*")
_CLOSING_FENCE = re.compile(r"^---[ \t\r]*$", re.MULTILINE)
_TOP_LEVEL_FIELDS = ("name", "description", "type", "originSessionId", "modified")
_METADATA_FIELDS = ("type", "originSessionId", "modified")
_KEY_VALUE_LINE = re.compile(
    r"(?P<indent>[ ]*)(?P<key>[A-Za-z_][A-Za-z0-9_.-]*):[ \t]+(?P<value>\S.*?)\s*"
)
# Left alone by the rescue: already a quoted scalar, or the header of a block scalar.
_KEEP_AS_WRITTEN = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'|[|>][-+0-9]*")
_BYTE_ORDER_MARK = "\ufeff"
# What PyYAML's reader refuses in a stream (its NON_PRINTABLE), and the line breaks YAML reads
# where a file's lines do not break (NEL, LS, PS, a lone CR): what a stand-in replaces.
_NOT_YAML = re.compile(
    "[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|\r(?!\n)"
)
_STAND_IN = "\ufffd"
# What the rescue writes as an escape inside its quotes: those, and a CR.
_ESCAPED_IN_QUOTES = re.compile(f"{_NOT_YAML.pattern}|\r")


def parse_memory(path: str, text: str, mtime: float, scan: HarnessScan) -> HarnessMemory:
    """The memory a file's text gives; front matter it cannot parse leaves the text all body."""
    # A byte-order mark is how the file was encoded, not what it says: front matter follows it.
    text = text.removeprefix(_BYTE_ORDER_MARK)
    fields: dict[str, str] = {}
    body = after_front_matter = text
    split = _split_front_matter(text)
    if split is not None:
        front_matter, after_front_matter = split
        parsed = _fields(front_matter)
        if isinstance(parsed, str):
            rescued = _fields(_quote_values(front_matter))
            parsed = parsed if isinstance(rescued, str) else rescued
        if isinstance(parsed, str):
            reason = f"unparseable front matter ({parsed}); read as a file without front matter"
            scan.notes.append(SkippedFile(path=path, reason=reason))
        else:
            fields, body = parsed, after_front_matter
    name = fields.get("name") or os.path.basename(path).removesuffix(".md")
    # Even when the front matter is kept as body, its fence is no description.
    description = fields.get("description") or _first_line(after_front_matter) or name
    return HarnessMemory(
        path=path,
        mtime=mtime,
        name=name,
        description=description,
        type=fields.get("type"),
        body=body,
        session_id=fields.get("originSessionId"),
        modified=fields.get("modified"),
    )


def _split_front_matter(text: str) -> tuple[str, str] | None:
    """The text between a first line `---` and the next `---` line, and the text after that."""
    first, newline, rest = text.partition("\n")
    closing = _CLOSING_FENCE.search(rest) if newline else None
    if not _FIRST_FENCE.fullmatch(first) or closing is None:
        return None
    return rest[: closing.start()], rest[closing.end() + 1 :]


def _fields(front_matter: str) -> dict[str, str] | str:
    """The fields this reader uses, as written; or why the front matter cannot give them."""
    try:
        root = _tree(front_matter)
    except yaml.YAMLError as error:
        return _problem(error)
    if root is None:
        return {}
    if not isinstance(root.event, yaml.MappingStartEvent):
        kind = "sequence" if isinstance(root.event, yaml.SequenceStartEvent) else "scalar"
        return f"a YAML {kind}, not a mapping"
    top = _values(front_matter, root)
    metadata = _mapping_value(root, "metadata")
    fields = {} if metadata is None else _values(front_matter, metadata)
    fields = {key: fields[key] for key in _METADATA_FIELDS if key in fields}
    fields.update((key, top[key]) for key in _TOP_LEVEL_FIELDS if key in top)
    return fields


class _Node:
    """A node of the front matter: its first event, where it ends, and a collection's items
    (a mapping's keys and values alternating)."""

    def __init__(self, event: yaml.Event, stand_ins: list[int]) -> None:
        self.event = event
        self.end = _at(event.end_mark)
        self.items: list[_Node] = []
        start = bisect.bisect_left(stand_ins, _at(event.start_mark))
        self.stood_in = start < len(stand_ins) and stand_ins[start] < self.end
        """Whether YAML read a stand-in for a character of this scalar's text."""


def _tree(front_matter: str) -> _Node | None:
    """The front matter's first node, from YAML's events: structure and places, no values
    resolved (no alias followed, no tag applied), and no recursion however deep it nests."""
    root = None
    open_collections: list[_Node] = []
    stand_ins = [match.start() for match in _NOT_YAML.finditer(front_matter)]
    readable = _NOT_YAML.sub(_STAND_IN, front_matter) if stand_ins else front_matter
    for event in yaml.parse(readable, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionEndEvent):
            open_collections.pop().end = _at(event.end_mark)
            continue
        if not isinstance(event, yaml.NodeEvent):
            continue
        node = _Node(event, stand_ins)
        if open_collections:
            open_collections[-1].items.append(node)
        elif root is None:
            root = node
        if isinstance(event, yaml.CollectionStartEvent):
            open_collections.append(node)
    return root


class _Mark(Protocol):
    index: int


def _at(mark: _Mark | None) -> int:
    """Where a mark stands in the text (PyYAML's parser marks every event)."""
    return 0 if mark is None else mark.index


def _values(front_matter: str, mapping: _Node) -> dict[str, str]:
    """Every key with a value, the value's text as written (the module docstring's forms)."""
    values = {}
    for key, value in zip(mapping.items[::2], mapping.items[1::2], strict=True):
        if isinstance(key.event, yaml.ScalarEvent):
            text = _text(front_matter, value)
            if text is None:
                text = _after_key(front_matter, key)
            if text is not None:
                values[key.event.value] = text
    return values


def _text(front_matter: str, node: _Node) -> str | None:
    """A value's text, by its form; None when nothing was written."""
    event = node.event
    start = _at(event.start_mark)
    if isinstance(event, yaml.ScalarEvent) and event.anchor is None and event.tag is None:
        if event.style in ('"', "'") and not node.stood_in:
            return event.value
        if event.style in ("|", ">"):
            return _block_lines(front_matter[start : node.end])
        if not event.value:
            return None
    if isinstance(event, yaml.CollectionStartEvent) and not event.flow_style:
        return front_matter[start : node.end].rstrip()
    line_end = front_matter.find("\n", node.end)
    written = front_matter[start : len(front_matter) if line_end < 0 else line_end]
    first, *rest = written.split("\n")
    return "\n".join([first, *(line.strip() for line in rest)]).rstrip()


def _after_key(front_matter: str, key: _Node) -> str | None:
    """What the key's line holds after `key:`, when YAML found no value there (a comment)."""
    line_end = front_matter.find("\n", key.end)
    line = front_matter[key.end : len(front_matter) if line_end < 0 else line_end]
    text = line.lstrip().removeprefix(":").strip()
    return text or None


def _block_lines(block: str) -> str:
    """A block scalar's lines as written: after its header line, without the indentation of
    its least indented line, without trailing empty lines."""
    lines = [line.rstrip("\r") for line in block.split("\n")[1:]]
    while lines and not lines[-1].strip():
        lines.pop()
    indent = min((len(line) - len(line.lstrip(" ")) for line in lines if line.strip()), default=0)
    return "\n".join(line[indent:] for line in lines)


def _mapping_value(mapping: _Node, name: str) -> _Node | None:
    found = None
    for key, value in zip(mapping.items[::2], mapping.items[1::2], strict=True):
        if isinstance(key.event, yaml.ScalarEvent) and key.event.value == name:
            found = value if isinstance(value.event, yaml.MappingStartEvent) else None
    return found


def _problem(error: yaml.YAMLError) -> str:
    """One line saying what YAML objected to, with its line in the file when known."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem:
        where = "" if error.problem_mark is None else f" on line {error.problem_mark.line + 2}"
        return f"{error.problem}{where}"
    return (str(error) or type(error).__name__).splitlines()[0]


def _quote_values(front_matter: str) -> str:
    """The front matter with each `key: value` value double-quoted, colons and all.

    A character YAML allows in no stream, or reads as a line break, is written as its escape,
    which the quotes read back.
    """
    lines = []
    for line in front_matter.split("\n"):
        match = _KEY_VALUE_LINE.fullmatch(line)
        if match is not None and not _KEEP_AS_WRITTEN.fullmatch(match["value"]):
            escaped = match["value"].replace("\\", "\\\\").replace('"', '\\"')
            escaped = _ESCAPED_IN_QUOTES.sub(lambda found: _yaml_escape(found[0]), escaped)
            line = f'{match["indent"]}{match["key"]}: "{escaped}"'
        lines.append(line)
    return "\n".join(lines)


def _yaml_escape(character: str) -> str:
    code = ord(character)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _first_line(body: str) -> str:
    """The body's first line with text, without its heading marks."""
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text
    return ""
