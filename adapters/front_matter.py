"""A harness memory file's text as a memory: its YAML front matter, its body, verbatim.

Claude Code's memory files are markdown with YAML front matter (docs/architecture.md,
Import): `name`, `description` and `type` at the top level, or `type` (and
`originSessionId`, `modified`) under `metadata:`. A file without front matter is still a
memory (its name is the file's name); front matter YAML cannot parse is retried with its
values quoted, else the whole text is the body, and noted.
"""

from __future__ import annotations

import os
import re

import yaml

from lazy_memory.engine.importing import HarnessMemory, HarnessScan, SkippedFile

_FIRST_FENCE = re.compile(r"---[ \t\r]*")
_CLOSING_FENCE = re.compile(r"^---[ \t\r]*$", re.MULTILINE)
_NULL_TAG = "tag:yaml.org,2002:null"
_TOP_LEVEL_FIELDS = ("name", "description", "type", "originSessionId", "modified")
_METADATA_FIELDS = ("type", "originSessionId", "modified")
_KEY_VALUE_LINE = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_.-]*):[ \t]+(?P<value>\S.*?)\s*")
# Left alone by the rescue: already a quoted scalar, or the header of a block scalar.
_KEEP_AS_WRITTEN = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'|[|>][-+0-9]*")
_BYTE_ORDER_MARK = "\ufeff"


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
        root = yaml.compose(front_matter, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        return _problem(error)
    except RecursionError:
        # PyYAML composes nested collections recursively; one file must not end the scan.
        return "nested too deeply"
    if root is None:
        return {}
    if not isinstance(root, yaml.MappingNode):
        kind = "sequence" if isinstance(root, yaml.SequenceNode) else "scalar"
        return f"a YAML {kind}, not a mapping"
    top = _values(front_matter, root)
    metadata = _mapping_value(root, "metadata")
    fields = {} if metadata is None else _values(front_matter, metadata)
    fields = {key: fields[key] for key in _METADATA_FIELDS if key in fields}
    fields.update((key, top[key]) for key in _TOP_LEVEL_FIELDS if key in top)
    return fields


def _values(front_matter: str, mapping: yaml.MappingNode) -> dict[str, str]:
    """Every key with a non-null value, the value's text as written (a collection's source)."""
    values = {}
    for key, value in mapping.value:
        if not isinstance(key, yaml.ScalarNode) or value.tag == _NULL_TAG:
            continue
        if isinstance(value, yaml.ScalarNode):
            # The scalar's own text, so 007, 2026-01-02 or yes stay exactly as written.
            values[key.value] = value.value
        else:
            values[key.value] = front_matter[value.start_mark.index : value.end_mark.index]
    return values


def _mapping_value(mapping: yaml.MappingNode, name: str) -> yaml.MappingNode | None:
    found = None
    for key, value in mapping.value:
        if isinstance(key, yaml.ScalarNode) and key.value == name:
            found = value if isinstance(value, yaml.MappingNode) else None
    return found


def _problem(error: yaml.YAMLError) -> str:
    """One line saying what YAML objected to, with its line in the file when known."""
    if isinstance(error, yaml.MarkedYAMLError) and error.problem:
        where = "" if error.problem_mark is None else f" on line {error.problem_mark.line + 2}"
        return f"{error.problem}{where}"
    return (str(error) or type(error).__name__).splitlines()[0]


def _quote_values(front_matter: str) -> str:
    """The front matter with each top-level `key: value` value double-quoted, colons and all."""
    lines = []
    for line in front_matter.split("\n"):
        match = _KEY_VALUE_LINE.fullmatch(line)
        if match is not None and not _KEEP_AS_WRITTEN.fullmatch(match["value"]):
            escaped = match["value"].replace("\\", "\\\\").replace('"', '\\"')
            line = f'{match["key"]}: "{escaped}"'
        lines.append(line)
    return "\n".join(lines)


def _first_line(body: str) -> str:
    """The body's first line with text, without its heading marks."""
    for line in body.splitlines():
        text = line.strip().lstrip("#").strip()
        if text:
            return text
    return ""
