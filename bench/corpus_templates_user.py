"""Corpus record templates about the user: their feedback and who they are.

The FEEDBACK templates (rules the user gave: small PRs, real databases in tests, commit style,
what to ask first) and the USER ones (role, languages, hours, editor, focus). Fields in braces
are drawn by bench.corpus.
"""

from __future__ import annotations

from bench.corpus_templates import Template, joined_lines
from lazy_memory.engine.records import RecordType

USER_TEMPLATES = (
    Template(
        RecordType.FEEDBACK,
        "prefer-small-prs-{sub.name}",
        "For {sub.name}, the user wants PRs under {pr_lines} lines with one concern each; split "
        "refactors from behaviour changes",
        joined_lines(
            "Said after a large PR to {sub.path} sat in review for a week.",
            "**Why:** {sub.name} has few reviewers and big diffs get rubber-stamped.",
            "**How to apply:** stack PRs; renames and moves go first, on their own.",
        ),
    ),
    Template(
        RecordType.FEEDBACK,
        "real-{sub.store}-in-{sub.name}-tests",
        "Tests for {sub.name} must hit a real {sub.store} through the `db` fixture, not mocks",
        joined_lines(
            "The fixture starts a throwaway container once per session.",
            "**Why:** mocked tests passed while a migration broke {env} in {month}.",
            "**How to apply:** use the fixture; mock only third-party HTTP APIs.",
        ),
    ),
    Template(
        RecordType.FEEDBACK,
        "run-{tool.name}-before-commit",
        "Always run `{tool.command}` before committing; the user does not want {tool.name} "
        "failures showing up in CI",
        joined_lines(
            "Said after a {sub.name} PR failed {tool.name} in CI; CI runs the same check.",
            "**Why:** a red pipeline costs the user a wasted review round.",
            "**How to apply:** run it from the repository root; its config is `{tool.config}`.",
        ),
    ),
    Template(
        RecordType.FEEDBACK,
        "commit-messages-{style.slug}",
        "Commit style the user insists on: {style.rule}",
        joined_lines(
            "The user corrected this more than once, most recently on a {sub.name} PR.",
            "**How to apply:** check `git log --oneline -5` before pushing; reword if needed.",
        ),
    ),
    Template(
        RecordType.FEEDBACK,
        "ask-before-{risk.slug}",
        "Ask the user before {risk.action}, even when it looks like the obvious fix: {risk.reason}",
        joined_lines(
            "Came up during {sub.name} work; they want to review it first, whatever the urgency.",
            "**Why:** {risk.reason}.",
            "**How to apply:** stop, describe the change and wait for an explicit yes.",
        ),
    ),
    Template(
        RecordType.FEEDBACK,
        "prefer-{library.new}-over-{library.old}",
        "Use {library.new} instead of {library.old} in new code: {library.reason}",
        joined_lines(
            "Existing {library.old} code (much of it in {sub.path}) is migrated only when touched.",
            "**Why:** {library.reason}.",
            "**How to apply:** in review, the user flags new {library.old} usage as a blocker.",
        ),
    ),
    Template(
        RecordType.FEEDBACK,
        "typed-errors-{sub.name}",
        "In {sub.name}, raise the typed errors from `{sub.module}/errors.py`, never a bare "
        "Exception deep in the code",
        joined_lines(
            "The API layer maps each typed error to a status code in one place.",
            "**Why:** a bare Exception surfaced as a 500 with a stack trace in {month}.",
            "**How to apply:** add a new error class there if none fits.",
        ),
    ),
    Template(
        RecordType.FEEDBACK,
        "working-style-{habit.slug}",
        "The user's working style: {habit.rule}",
        joined_lines(
            "Repeated in several sessions, last during {sub.name} work; it is a standing rule.",
            "**How to apply:** check the last message against it before handing back.",
        ),
    ),
    Template(
        RecordType.FEEDBACK,
        "no-new-deps-{sub.name}",
        "Don't add third-party dependencies to {sub.name} without asking; its image size and "
        "CVE surface are audited",
        joined_lines(
            "The {sub.team} team reviews every new package in {sub.path}/pyproject.toml.",
            "**Why:** a transitive dependency pulled in a critical CVE last quarter.",
            "**How to apply:** prefer the standard library; propose a package in {sub.channel}.",
        ),
    ),
    Template(
        RecordType.FEEDBACK,
        "logging-{sub.name}",
        "Log with structlog in {sub.name}, include tenant_id and request_id, and never log "
        "`{sub.entity}` payloads (PII)",
        joined_lines(
            "Logs ship to Datadog and are kept for {days} days.",
            "**Why:** a payload in the logs was a reportable PII incident.",
            "**How to apply:** log ids and counts only.",
        ),
    ),
    Template(
        RecordType.USER,
        "user-role-{role.slug}",
        "The user is {role.phrase} on the {sub.team} team; {role.implication}",
        joined_lines(
            "Mentioned in their first session while working on {sub.name}.",
            "**How to apply:** {role.implication}.",
        ),
    ),
    Template(
        RecordType.USER,
        "user-knows-{languages.known}-new-to-{languages.new}",
        "The user has years of {languages.known} but is new to {languages.new}; explain "
        "{languages.new} idioms by analogy",
        joined_lines(
            "They are porting parts of {sub.name} and read {languages.new} slowly.",
            "**How to apply:** point out where {languages.new} differs from {languages.known}; "
            "skip basics they already know.",
        ),
    ),
    Template(
        RecordType.USER,
        "user-hours-{zone.slug}",
        "The user works {zone.hours}; long jobs should finish or checkpoint before they log off",
        joined_lines(
            "Unattended runs overnight have failed silently before.",
            "**How to apply:** estimate run time first and say so when it will not finish.",
        ),
    ),
    Template(
        RecordType.USER,
        "user-reviews-{sub.name}",
        "The user is the required reviewer for {sub.name}; they read diffs commit by commit, so "
        "keep history clean",
        joined_lines(
            "They are in the {sub.team} team and on its on-call rotation.",
            "**How to apply:** one logical change per commit, no fixups left behind.",
        ),
    ),
    Template(
        RecordType.USER,
        "user-editor-{editor.slug}",
        "The user edits in {editor.label}; give locations as `path:line` so they can jump to them",
        joined_lines(
            "They copy locations straight from the chat into the editor.",
            "**How to apply:** relative paths from the repository root, with line numbers.",
        ),
    ),
    Template(
        RecordType.USER,
        "user-focus-{sub.name}",
        "This quarter the user mostly works on {sub.name} and {sub.upstream}; assume questions "
        "are about those unless stated",
        joined_lines(
            "Their team is {sub.team}; {sub.name} questions go to {sub.channel} otherwise.",
            "**How to apply:** search {sub.path} first when a question is ambiguous.",
        ),
    ),
)
