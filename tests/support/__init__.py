"""What the tests of every tier share, one module per kind of thing.

- actors.py: who writes (ALICE, BOB, BUILDER, IMPORTER); clocks.py: T0, NOON and the clocks a
  service reads (FixedClock, TickingClock); records.py: record and compact factories.
- stores.py: the one way to open a fresh store of a given backend, in process or for a `lazy`
  process; daemon.py and postgres.py start the servers some backends need.
- components.py: what a test does when something beyond Python is missing (skip, or fail in CI).
- jsonrpc.py: a raw JSON-RPC client; fake_anthropic.py and anthropic_messages.py: the fake
  Messages API; hostile_crowd.py, hostile_text.py, name_table.py, unreadable_rows.py,
  search_relevance.py, mounts.py, documents.py: data and tools named for what they hold.
- container_probe.py: the probe .ci/container.sh runs against the container image.

Fixtures are not here: they live in the conftest.py of the folder that uses them.
"""
