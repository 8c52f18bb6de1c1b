"""Translation of the engine's references and records into LSP's types, in client units.

The core (engine/references.py) counts columns in code points; every range sent to a
client goes through its document's position codec (UTF-16 unless negotiated otherwise).
Every stored text an editor shows (labels, hints, tooltips, titles, symbols) is made visible
(engine/visible.py); record_markdown does the same for hovers and read-only documents.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from lazy_memory.engine.index import IndexEntry
from lazy_memory.engine.records import Record, RecordType
from lazy_memory.engine.references import (
    Completion,
    Problem,
    Reference,
    document_uri,
    problem_message,
    record_markdown,
)
from lazy_memory.engine.visible import visible_line

SHOW_COMMAND = "lazy-memory.show"
"""What running a code lens does: answer the record's document (a read; any client may)."""
SOURCE = "lazy-memory"
"""Where diagnostics say they come from."""

_SYMBOL_KINDS = {
    RecordType.USER: types.SymbolKind.Object,
    RecordType.FEEDBACK: types.SymbolKind.Event,
    RecordType.PROJECT: types.SymbolKind.Module,
    RecordType.REFERENCE: types.SymbolKind.Constant,
}
_START = types.Range(
    start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
)


def reference_range(
    document: TextDocument, reference: Reference, *, name_only: bool = False
) -> types.Range:
    """Where the reference (or just its name) is, in the client's units."""
    start, end = (
        (reference.name_start, reference.name_end)
        if name_only
        else (reference.start, reference.end)
    )
    return document.range_to_client_units(
        ServerTextRange(
            ServerTextPosition(reference.line, start), ServerTextPosition(reference.line, end)
        )
    )


def hover(document: TextDocument, reference: Reference, record: Record) -> types.Hover:
    """The record in full, as markdown, over its reference."""
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=record_markdown(record)),
        range=reference_range(document, reference),
    )


def completion_items(
    document: TextDocument,
    line: int,
    character: int,
    completion: Completion,
    entries: list[IndexEntry],
) -> list[types.CompletionItem]:
    """One item per record, replacing the partial name typed (and closing `[[` if needed).

    The name inserted is the visible one too: a control or bidi character must never be typed
    into a person's file for them (the name rule of #17 refuses such names for new saves).
    """
    replaced = document.range_to_client_units(
        ServerTextRange(
            ServerTextPosition(line, completion.start), ServerTextPosition(line, character)
        )
    )
    closing = "]]" if completion.close else ""
    items = []
    for entry in entries:
        name = visible_line(entry.name)
        items.append(
            types.CompletionItem(
                label=name,
                kind=types.CompletionItemKind.Reference,
                detail=entry.type.value,
                documentation=visible_line(entry.description),
                filter_text=name,
                text_edit=types.TextEdit(range=replaced, new_text=name + closing),
            )
        )
    return items


def inlay_hint(document: TextDocument, reference: Reference, entry: IndexEntry) -> types.InlayHint:
    """The record's description, right after its reference."""
    position = document.position_to_client_units(ServerTextPosition(reference.line, reference.end))
    return types.InlayHint(
        position=position,
        label=visible_line(entry.description),
        tooltip=f"{visible_line(entry.name)} ({entry.type.value}), revision {entry.revision}",
        padding_left=True,
    )


def code_lens(document: TextDocument, reference: Reference, entry: IndexEntry) -> types.CodeLens:
    """The record's description above its reference's line, for clients without inlay hints."""
    return types.CodeLens(
        range=reference_range(document, reference),
        command=types.Command(
            title=f"{visible_line(entry.name)}: {visible_line(entry.description)}",
            command=SHOW_COMMAND,
            arguments=[{"uri": document_uri(entry.name)}],
        ),
    )


def diagnostic(document: TextDocument, reference: Reference, problem: Problem) -> types.Diagnostic:
    """A warning on a reference that names no live record."""
    return types.Diagnostic(
        range=reference_range(document, reference, name_only=True),
        message=problem_message(reference, problem),
        severity=types.DiagnosticSeverity.Warning,
        code=f"{problem.value}-record",
        source=SOURCE,
    )


def document_link(
    document: TextDocument, reference: Reference, entry: IndexEntry
) -> types.DocumentLink:
    """A link from the reference to the record's read-only document."""
    return types.DocumentLink(
        range=reference_range(document, reference, name_only=True),
        target=document_uri(entry.name),
        tooltip=visible_line(entry.description),
    )


def symbol(entry: IndexEntry) -> types.SymbolInformation:
    """A record as a workspace symbol, located in its read-only document."""
    return types.SymbolInformation(
        name=visible_line(entry.name),
        kind=_SYMBOL_KINDS[entry.type],
        location=types.Location(uri=document_uri(entry.name), range=_START),
        container_name=entry.type.value,
    )
