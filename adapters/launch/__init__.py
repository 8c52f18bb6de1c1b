"""What a launch keeps between sessions: the kept launch context (cache.py), the launch log
(log.py), and the store's plain state the hook renders from (state.py)."""
