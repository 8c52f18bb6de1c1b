"""The benchmark suite: a realistic store generator and the measurements built on it."""
