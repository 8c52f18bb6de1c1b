"""What the tests of the store's boundaries (issue #11, part 4) share: the heading of their
figures. Who may write, who may talk, what is read:

- A daemon answers nothing but errors to a connection without a valid token, even to
  requests pipelined behind a refused initialize (test_tokenless_daemon.py).
- Tokens: digests only, nowhere a secret, mode 0600, compared with hmac.compare_digest
  (test_token_secrets.py).
- The importer reads nothing outside the directories it scans, whatever links point where;
  an editor request reads no document the client never opened (test_confined_reads.py).
- No record's content changes how the launch context is framed (test_launch_framing.py).

Covered elsewhere, not repeated: that an agent writes nothing through any way in, byte for
byte (tests/reliability/test_agent_write_paths.py), an agent's save and rm one by one over
the engine, MCP, the CLI and the daemon (tests/e2e), a revoked token refused from the next
connection on and bad tokens of each JSON type refused then closed
(tests/e2e/daemon/test_daemon_tokens.py), each kind of link the reader meets
(tests/unit/harness_reader/test_links.py), TokenStore.verify's constant-time comparison and
the token file's mode under any umask (tests/unit/test_token_store.py).
"""

from __future__ import annotations

HEADING = "boundaries"
