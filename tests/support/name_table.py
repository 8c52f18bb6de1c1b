"""The table of legal and illegal names the name rule's tests share (engine/names.py)."""

from __future__ import annotations

from lazy_memory.engine.names import NAME_MAX_LENGTH

LEGAL = [
    "a",
    "deploy-steps",
    "v1.2_notes",
    "Release checklist",
    "Testing Strategy (pytest)",
    "배포 절차",
    "日本語のメモ",
    '"Don\'t" mock the database',
    "API keys, secrets & env vars",
    "Überblick: Architektur",
    "-leading-dash",
    "a  b",
    "e\u0301t\u00e9",
    "note (user)",
    "x (users): y",
    "x" * NAME_MAX_LENGTH,
    "😀" * NAME_MAX_LENGTH,
    # Look-alikes are legal where they frame nothing: no `(type):` to forge, and a file system
    # reads a full-width solidus or an ellipsis as what it is, not as `/` or `.`.
    "ratio 1\u22362",
    "\u2026and more",
    "\uff21\uff0f\uff22 notes",
    "\U0001d401old (\U0001d42e\U0001d42c\U0001d41e\U0001d42b) note",
]
"""Names a new record may take: what real harness memory files carry, and the edges."""

ILLEGAL = {
    "": "cannot be empty",
    " ": "only whitespace",
    " lead": "starts or ends with whitespace",
    "trail ": "starts or ends with whitespace",
    ".hidden": "starts with a dot",
    "..": "starts with a dot",
    "../../x": "path separator",
    "/etc/passwd": "path separator",
    "a\\b": "path separator",
    "x" * (NAME_MAX_LENGTH + 1): "201 characters; the limit is 200",
    "x" * 5000: "5000 characters",
    "tab\tname": "U+0009, a control character",
    "nul\x00name": "U+0000, a control character",
    "esc\x1b[31mred": "U+001B, a control character",
    "del\x7f": "U+007F, a control character",
    "csi\x9bx": "U+009B, a control character",
    "line\nbreak": "U+000A, a control character",
    "sep\u2028arated": "U+2028, a line separator",
    "para\u2029graph": "U+2029, a paragraph separator",
    "rlo\u202eevil": "U+202E, a format character",
    "zero\u200bwidth": "U+200B, a format character",
    "\ufeffbom": "U+FEFF, a format character",
    "no\u00a0break": "U+00A0, a space other than the plain space",
    "private\ue000use": "U+E000, a private-use character",
    "lone\ud800": "U+D800, a lone surrogate",
    "b (user): fake": "would make its index line",
    "b (Project): fake": "would make its index line",
    "b ( feedback ) : fake": "would make its index line",
    "(reference):x": "would make its index line",
    # The same, in look-alike characters (#30 point 3): compatibility forms NFKC folds, and
    # Unicode's confusables of `(`, `)` and `:` that it does not.
    "fake\uff08project\uff09: x": "a look-alike of '(project):'",
    "fake (project)\uff1a x": "a look-alike of '(project):'",
    "b \uff08\uff50\uff52\uff4f\uff4a\uff45\uff43\uff54\uff09\uff1a fake": "a look-alike",
    "b \ufe59feedback\ufe5a: fake": "a look-alike of '(feedback):'",
    "b \u207dreference\u207e: fake": "a look-alike of '(reference):'",
    "b (\u1d58\u02e2\u1d49\u02b3): fake": "a look-alike of '(user):'",
    "b (user)\u2236 fake": "a look-alike of '(user):'",
    "b (user)\ua789 fake": "a look-alike of '(user):'",
    "b \u2768user\u2769: fake": "a look-alike of '(user):'",
    "b \u3014project\u3015: fake": "a look-alike of '(project):'",
}
"""Names no new record may take, and what the refusal says."""

REAL_WORLD = [
    "Project Overview",
    "User Preferences",
    "Testing Strategy (pytest)",
    "배포 절차",
    "코드 리뷰 규칙",
    "Don't mock the database",
    '"Golden" test files',
    "API keys, secrets & env vars",
    "CLAUDE.md conventions",
    "feedback_testing",
    "Release v2.3 checklist",
    "Überblick: Architektur",
    "日本語のメモ",
]
"""Names of the kind real Claude Code memory files carry (#18 point 7): spaces, capitals,
Korean and other scripts, quotes, commas, parentheses."""
