"""The name rule: what a record's name may be, on every path a name enters a store (#17).

A name is typed by people, read back by people and models, and listed one per line in the
launch context (`- name (type): description`). So the rule (docs/architecture.md, Records) is:

- 1 to NAME_MAX_LENGTH (200) characters, counted as code points;
- printable, as `str.isprintable()` has it: no control, format, surrogate, private-use or
  unassigned character (Unicode categories Cc, Cf, Cs, Co, Cn: C0, DEL, C1, bidi overrides
  and isolates, zero-width characters, the byte-order mark), no line or paragraph separator
  (Zl, Zp), and no space but the plain one (Zs: a no-break or ideographic space reads as a
  plain one, so two names would look alike). It is also what output shows verbatim
  (engine/visible.py), so a legal name is always shown exactly as it is;
- no path separator (`/` or `\\`) and no leading dot;
- not blank, and no whitespace at either end;
- no `(type):` (one of the four record types, in any case): a name holding one would make
  its index line read as a record of that type, or as another record.

The `(type):` mark, like every check of framing_problem, is looked for in the name as a reader
sees it (framing_view): after compatibility normalisation (NFKC), which reads full-width,
small, superscript and other compatibility forms as the plain character (U+FF08 FULLWIDTH
LEFT PARENTHESIS as `(`, U+FF1A FULLWIDTH COLON as `:`), and with the look-alikes of `(`, `)`
and `:` that NFKC leaves (Unicode's confusables, TR39: U+2236 RATIO, U+A789 MODIFIER LETTER
COLON, U+2768 MEDIUM LEFT PARENTHESIS ORNAMENT...) read as those. The path separator and
leading dot checks keep to the exact characters: they are about file systems, which read code
points, not shapes, so a full-width solidus separates nothing (and a name that starts with
U+2026 HORIZONTAL ELLIPSIS does not start with a dot).

Two names are the same name when they are equal after canonical normalisation (NFC,
name_key): `café` with a composed é and with `e` + U+0301 display alike, so they are one
record. A store keeps a name as first written (the record never changes spelling, nor does its
history), and finds it by any spelling: held_spelling gives the stored one, which every save
(through writable_name, which checks the rule on it once), read and removal then uses
(engine/saving.py, engine/service.py), every backend looking names up through
Storage.spellings. A store written before this rule may hold two spellings of one
name: each stays reachable by its exact spelling, and a third one is refused as ambiguous.

Spaces, capitals, letters of every script, digits, quotes, commas, parentheses and other
punctuation are legal: real harness memory files use them.

A name a store already holds (an older import took names outside this rule) stays
reachable by its exact name: show, history and rm take any name, and a save of a held name
is allowed as long as it cannot break the launch context's framing (framing_problem). An
imported or migrated name that breaks the rule gets derived_name instead, reported, with
the original kept in the record's provenance.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, TypeVar

from lazy_memory.engine.constants import RECORD_TYPE_NAMES
from lazy_memory.engine.errors import InvalidRecord, NotFound
from lazy_memory.engine.visible import SHOWN_LENGTH as _SHOWN_LENGTH
from lazy_memory.engine.visible import shown_name
from lazy_memory.engine.wording import counted

if TYPE_CHECKING:
    from lazy_memory.engine.ports import Storage

_T = TypeVar("_T")

NAME_MAX_LENGTH = 200
"""The longest name, in characters (code points)."""

RULE = (
    f"a name is 1-{NAME_MAX_LENGTH} printable characters (spaces, capitals, any script and "
    "punctuation are fine) without control or format characters, '/' or '\\', a leading dot, "
    "spaces at either end, or '(type):'"
)
"""The rule in one sentence, for error messages and tool descriptions."""

_TYPE_MARK = re.compile(rf"\(\s*({'|'.join(RECORD_TYPE_NAMES)})\s*\)\s*:", re.IGNORECASE)
_CATEGORY_NAMES = {
    "Cc": "a control character",
    "Cf": "a format character",
    "Cs": "a lone surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned character",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
    "Zs": "a space other than the plain space",
}
_LOOK_ALIKES = str.maketrans(
    dict.fromkeys("\u2768\u2772\u3014\ufd3e\uff3b", "(")
    | dict.fromkeys("\u2769\u2773\u3015\ufd3f\uff3d", ")")
    | dict.fromkeys(
        "\u02d0\u02f8\u0589\u05c3\u0703\u0704\u0903\u0a83\u16ec\u1803\u1809\u205a"
        "\u2236\ua4fd\ua789\ufe30",
        ":",
    )
)
"""Unicode's confusables (TR39) of `(`, `)` and `:` that NFKC does not fold into them."""
_SEPARATORS = "/\\"
_LEADING_DOTS = re.compile(r"\A[.\s]+")
_HASH_LENGTH = 8


def name_problem(name: str) -> str | None:
    """Why a new record may not take name, or None when it may."""
    if not name:
        return "a name cannot be empty"
    if len(name) > NAME_MAX_LENGTH:
        return f"it is {len(name)} characters; the limit is {NAME_MAX_LENGTH}"
    if not name.isprintable():
        character = next(character for character in name if not character.isprintable())
        kind = _CATEGORY_NAMES.get(unicodedata.category(character), "an unprintable character")
        return f"it holds U+{ord(character):04X}, {kind}"
    if not name.strip():
        return "it is only whitespace"
    if name != name.strip():
        return "it starts or ends with whitespace"
    if any(separator in name for separator in _SEPARATORS):
        return "it holds a path separator ('/' or '\\')"
    if name.startswith("."):
        return "it starts with a dot"
    return _type_mark_problem(name)


def framing_problem(name: str) -> str | None:
    """Why even a name a store already holds may not be saved again, or None.

    What no store may be given at all: a name that is not text, is blank, spans lines, or
    holds `(type):`, since each would break or forge a line of the launch context. Each is
    judged on the name as a reader sees it (framing_view), look-alikes read as what they
    look like.
    """
    if not is_text(name):
        return "it is not Unicode text"
    seen = framing_view(name)
    if not seen.strip():
        return "a name cannot be blank"
    if seen.splitlines() != [seen]:
        return "it spans more than one line"
    return _type_mark_problem(name)


def framing_view(name: str) -> str:
    """name as a reader sees it, for the framing checks: compatibility forms (NFKC) and the
    confusables of `(`, `)` and `:` read as the plain characters."""
    return unicodedata.normalize("NFKC", name.translate(_LOOK_ALIKES)).translate(_LOOK_ALIKES)


def name_key(name: str) -> str:
    """What names are compared by: their canonical (NFC) form. Two names with one key are one
    name, however each is spelled."""
    return unicodedata.normalize("NFC", name)


def spellings_among(name: str, held: Collection[str]) -> list[str]:
    """Storage.spellings's answer from the names held (or those of them that may be one):
    [name] if it is held exactly, else the held names equal to it after NFC, in name order.

    Every backend answers through this, so all agree on what the same name is. Only a name
    outside ASCII can differ from its NFC form, so a backend may pass only those, name and
    its NFC form.
    """
    if name in held:
        return [name]
    key = name_key(name)
    return sorted({other for other in held if other == key or _spells(other, key)})


def _spells(other: str, key: str) -> bool:
    """Whether other, a name that is not key itself, is key in another spelling: only one
    outside ASCII and not in NFC can be (a quick check settles most)."""
    return (
        not other.isascii()
        and not unicodedata.is_normalized("NFC", other)
        and name_key(other) == key
    )


async def held_spelling(name: str, storage: Storage) -> str:
    """The spelling by which the store holds the record that name names.

    name itself when the store holds it exactly, or holds no spelling of it (a new record);
    else the one stored name equal to it after NFC, which the record keeps. A store written
    before this rule may hold two such names: then InvalidRecord, naming both, since only
    the exact spelling says which is meant.
    """
    if not is_text(name):
        return name
    spellings = await storage.spellings(name)
    if not spellings or name in spellings:
        return name
    if len(spellings) == 1:
        return spellings[0]
    listed = ", ".join(spelled(spelling) for spelling in spellings)
    raise InvalidRecord(
        f"{spelled(name)} is the same name (after Unicode normalisation) as "
        f"{counted(len(spellings), 'record')} this store holds from before that rule: {listed}; "
        "give one exactly"
    )


async def by_any_spelling(name: str, storage: Storage, read: Callable[[str], Awaitable[_T]]) -> _T:
    """read of name, or, when no record is held by that exact spelling (NotFound), read of
    the spelling the store holds it by (held_spelling)."""
    try:
        return await read(storable(name))
    except NotFound:
        spelling = await held_spelling(name, storage)
        if spelling == name:
            raise
    return await read(spelling)


async def check_spelling(name: str, storage: Storage) -> None:
    """Refuse a name the store holds by another spelling (InvalidRecord naming it).

    For a trusted peer's raw write (rpc/jsonrpc/storage_methods.py), which skips
    held_spelling: a new record whose name equals a held one after NFC would be a second
    record that displays as the first.
    """
    spelling = await held_spelling(name, storage)
    if spelling != name:
        raise InvalidRecord(
            f"{spelled(name)} is the same name (after Unicode normalisation) as the record "
            f"{spelled(spelling)}: write that record by its own spelling"
        )


def check_name(name: str) -> str:
    """Return name if a new record may take it, else raise InvalidRecord saying why."""
    problem = name_problem(name)
    if problem is not None:
        raise _refused(name, problem)
    return name


async def writable_name(
    name: str, storage: Storage, recall: Callable[[str], Awaitable[_T]]
) -> tuple[str, _T | None]:
    """The name a save writes, checked and normalised once, and recall's answer for it.

    recall reads what the store holds by one exact spelling (None when it holds no live
    record by it). The name is the spelling the store holds it by (held_spelling), looked
    up only when recall finds nothing by the name as given: a save most often names a
    record the store holds exactly, so that one read is all it costs. The name then obeys
    the rule, or is held from before it (a removed record included) and cannot break
    framing; the store's history is asked only for a name that breaks the rule.
    """
    found = await recall(name) if is_text(name) else None
    spelling = name if found is not None else await held_spelling(name, storage)
    if spelling != name:
        found = await recall(spelling)
    problem = name_problem(spelling)
    if problem is not None:
        held = found is not None or (is_text(spelling) and bool(await storage.history(spelling)))
        _check_held(spelling, problem, held=held)
    return spelling, found


async def check_writable_name(name: str, storage: Storage) -> bool:
    """Return whether name is held from before the rule; raise InvalidRecord if not writable.

    For a trusted peer's raw write (rpc/jsonrpc/storage_methods.py), which writes the name
    as it is (check_spelling refuses another spelling); a save goes through writable_name.
    A name that obeys the rule is writable (False). One that does not is writable only if
    the store has held it (a removed record included) and it cannot break framing (True);
    the store is asked only then, so an ordinary write costs no extra read.
    """
    problem = name_problem(name)
    if problem is None:
        return False
    _check_held(name, problem, held=is_text(name) and bool(await storage.history(name)))
    return True


def _check_held(name: str, problem: str, *, held: bool) -> None:
    """Refuse name, which breaks the rule (problem), unless the store holds it from before
    the rule (held) and it cannot break framing."""
    if not held:
        raise _refused(name, problem)
    framing = framing_problem(name)
    if framing is not None:
        raise InvalidRecord(
            f"invalid name {shown_name(name)}: {framing}, so it is not saved again (it can "
            "still be shown and removed)"
        )


def _refused(name: str, problem: str) -> InvalidRecord:
    return InvalidRecord(f"invalid name {shown_name(name)}: {problem}; {RULE}")


def derived_name(name: str) -> str:
    """A name that obeys the rule, derived from one that does not: the same for the same name.

    Whitespace of any kind (tabs, line breaks, other spaces) becomes a plain space, runs of
    it one; other unprintable characters are dropped; `/` and `\\` become `-`; `(type):`
    loses its colon (a name holding a look-alike of one is read as framing_view reads it
    first); leading dots and spaces go; the rest is cut to fit before `-` and 8 hex digits of
    the original's SHA-256, so two originals never meet in one derived name.
    """
    suffix = "-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LENGTH]
    seen = framing_view(name)
    kept = []
    for character in seen if _TYPE_MARK.search(seen) else name:
        if character in _SEPARATORS:
            kept.append("-")
        elif character.isspace():
            kept.append(" ")
        elif character.isprintable():
            kept.append(character)
    text = " ".join("".join(kept).split())
    text = " ".join(_TYPE_MARK.sub(lambda mark: f"({mark[1]})", text).split())
    text = _LEADING_DOTS.sub("", text)
    text = text[: NAME_MAX_LENGTH - len(suffix)].rstrip()
    derived = (text or "unnamed") + suffix
    # The steps above obey the rule by construction; this keeps the promise if one is missed.
    return derived if name_problem(derived) is None else "unnamed" + suffix


def is_text(name: str) -> bool:
    """Whether name can be stored at all: it holds no lone surrogate."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def storable(name: str) -> str:
    """A name to look up; one no store could hold (not Unicode text) names no record."""
    if not is_text(name):
        raise NotFound(f"no record named {name!r}: the name is not Unicode text")
    return name


def spelled(name: str) -> str:
    """A name quoted with every character outside ASCII escaped (`'cafe\\u0301'`): how a
    message tells apart two spellings that display alike."""
    return ascii(name) if len(name) <= _SHOWN_LENGTH else f"{name[:_SHOWN_LENGTH]!a}…"


def _type_mark_problem(name: str) -> str | None:
    mark = _TYPE_MARK.search(name) or _TYPE_MARK.search(framing_view(name))
    if mark is None:
        return None
    held = repr(mark[0]) if mark.string is name else f"a look-alike of {mark[0]!r}"
    return (
        f"it holds {held}, which would make its index line `- name (type): description` "
        "read as another record's"
    )
