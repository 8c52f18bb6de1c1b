"""The memory model and its rules: records, validation, the storage port and the use cases.

Nothing in this package touches the outside world; adapters implement its ports.
"""
