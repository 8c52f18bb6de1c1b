"""Claude Code's own files: its memory folders (the import), its settings and hook (set-up)."""
