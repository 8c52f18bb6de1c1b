"""What a launch keeps between sessions: the kept section (cache.py), its log, the plain state."""
