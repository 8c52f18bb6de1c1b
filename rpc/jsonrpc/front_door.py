"""The daemon's front door: the places of connections with a token, and of those without.

A connection *waits* from its accept until `initialize` grants it a valid token, and is a
*member* from then until it closes. The two are counted apart, so strangers never take a
place that a token holder needs:

- At most `max_connections` members are served at once. Only a valid token counts there: a
  member over the cap is refused at `initialize` (DaemonFull, a StorageUnavailable: -32014),
  whatever waits.
- At most `max_unauthenticated_connections` wait at once. One more is let in all the same,
  and the connection that has waited longest is dropped, told why, to make room. A client
  with a valid token sends `initialize` as soon as it connects and stops waiting within a
  few turns of the event loop, while the daemon accepts a sixteenth of the places a turn at
  most, and once they are all taken drops no faster than all of them in GRACE_SECONDS
  (`accepts_now`): however fast a crowd connects, it cannot get a newcomer pushed out
  before then. So holding every place locks nobody out: it only shortens each stranger's
  wait. (Refusing the newest, as the daemon did when strangers and members shared one cap,
  let whoever held the places keep them. A cap per address would not help: an attacker has
  many addresses, while a team may share one behind a NAT, and a unix socket has none.)
- A waiting connection costs a socket and a few small objects: nothing runs for it until
  it sends its first bytes (`Arrival`), and one timer serves every handshake deadline, as
  the longest waiting always has the nearest (`_sweep`). A connection that sent no
  `initialize` with a valid token in `handshake_timeout_seconds` is told so and closed.
- A connection dropped, timed out or refused lingers as a bare socket for a moment so that
  its client reads why (`see_out`); at most as many linger as may wait, the oldest closed
  first. The daemon's sockets are so bounded by `sockets_needed`.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from collections.abc import Callable
from dataclasses import dataclass

from lazy_memory.engine.errors import StorageUnavailable
from lazy_memory.engine.wording import counted
from lazy_memory.rpc.jsonrpc.connection_limits import ConnectionLimits, handshake_timed_out, see_out
from lazy_memory.rpc.jsonrpc.listener import peer
from lazy_memory.rpc.jsonrpc.quiet_log import QuietLog

TURNS_OF_GRACE = 16
"""A newcomer's `initialize` takes about five turns of the event loop to be read and answered;
the daemon accepts at most 1/TURNS_OF_GRACE of max_unauthenticated_connections a turn, so
that many turns pass before the connections accepted after it could push it out."""
MOST_ACCEPTS_PER_TURN = 128
GRACE_SECONDS = 0.1
"""About how long a newcomer is never dropped to make room: once every place is taken, the
daemon drops at most max_unauthenticated_connections in that time, and accepts no faster
(the kernel queues the rest), so a client slow to send its `initialize` (its machine busy,
a long round trip) still has that long to do it. Longer would keep a client waiting in the
kernel's queue for longer behind a crowd bigger than the places (the crowd's size over the
places, times this)."""
TIMEOUTS_PER_TURN = 32
"""Connections timed out in one turn of the event loop: a crowd that connected at once times
out at once, and members' requests are answered between the turns that see it out."""
SPARE_SOCKETS = 64
"""File descriptors a daemon needs besides its connections: the store, logs, the listener."""

logger = logging.getLogger(__name__)


class DaemonFull(StorageUnavailable):
    """Every member's place is taken: the refusal a client with a valid token can get. To
    that client the store is unavailable for now (-32014; its `data.type` says which)."""


class Arrival(asyncio.StreamReaderProtocol):
    """A connection's protocol: a stream's, which tells the door when its client first
    speaks or leaves without a word."""

    def __init__(self, door: FrontDoor) -> None:
        self.reader = asyncio.StreamReader()
        super().__init__(self.reader)
        self.door = door
        self.writer: asyncio.StreamWriter | None = None
        self.spoke = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """The connection is accepted: it waits at the door."""
        super().connection_made(transport)
        loop = asyncio.get_running_loop()
        assert isinstance(transport, asyncio.WriteTransport)
        self.writer = asyncio.StreamWriter(transport, self, self.reader, loop)
        self.door.arrived(self)

    def data_received(self, data: bytes) -> None:
        """Buffer data for the stream; the first bytes start the connection's serving."""
        super().data_received(data)
        if not self.spoke:
            self.spoke = True
            self.door.spoke(self)

    def eof_received(self) -> bool | None:
        """The client ended its side: one that never spoke is closed at once."""
        keep_open = super().eof_received()
        if not self.spoke:
            self.door.left(self)
        return keep_open

    def connection_lost(self, exc: Exception | None) -> None:
        """The socket closed (or was handed to `see_out`): one that never spoke is forgotten.

        The writer and this protocol hold each other: let go, so that refcounting frees the
        connection at once. Left to the cyclic collector, a crowd's connections piled up
        between its runs, and each full run took a few hundred milliseconds to free them,
        a pause every client waited through.
        """
        super().connection_lost(exc)
        if not self.spoke:
            self.door.left(self)
        self.writer = None


@dataclass
class _Waiting:
    name: str
    deadline: float
    """When its handshake time is up (the event loop's time)."""
    task: asyncio.Task[None] | None = None
    """What serves it, once it has spoken."""


Serve = Callable[[Arrival, str], "asyncio.Task[None]"]


class FrontDoor:
    """Who waits for a token (oldest first), who holds one, and who is being seen out."""

    def __init__(
        self, limits: ConnectionLimits, quiet: QuietLog, serve: Serve, closed: Callable[[], None]
    ) -> None:
        self.limits = limits
        self.waiting: dict[Arrival, _Waiting] = {}
        self.members: set[Arrival] = set()
        self.lingering: dict[asyncio.BaseTransport, None] = {}
        self.arrived_count = 0
        self.closing = False
        self._quiet = quiet
        self._serve = serve
        self._closed = closed
        self._sweeping: asyncio.Handle | None = None
        self._room_to_make = float(self._per_turn())
        """How many the door may drop to make room now: a bucket GRACE_SECONDS refills."""
        self._refilled_at = asyncio.get_running_loop().time()

    def arrived(self, arrival: Arrival) -> None:
        """Let a new connection wait for its token, dropping the one that waited longest if
        every place is taken."""
        assert arrival.writer is not None
        if self.closing:
            arrival.writer.transport.abort()
            return
        self.arrived_count += 1
        name = f"connection {self.arrived_count}"
        if self._quiet.allows("accepted"):
            logger.info("%s accepted from %s", name, peer(arrival.writer))
        if len(self.waiting) >= self.limits.max_unauthenticated:
            self._turn_away(
                next(iter(self.waiting)), "dropped to make room", made_room(self.limits)
            )
        loop = asyncio.get_running_loop()
        self.waiting[arrival] = _Waiting(name, loop.time() + self.limits.handshake_seconds)
        if self._sweeping is None:
            self._sweeping = loop.call_at(self.waiting[arrival].deadline, self._sweep)

    def spoke(self, arrival: Arrival) -> None:
        """Start serving a waiting connection, now that it has sent its first bytes."""
        waiting = self.waiting.get(arrival)
        if waiting is not None:
            waiting.task = self._serve(arrival, waiting.name)

    def left(self, arrival: Arrival) -> None:
        """Close a connection that left without a word."""
        waiting = self.waiting.pop(arrival, None)
        if waiting is None:
            return
        if arrival.writer is not None:
            arrival.writer.transport.close()
        if self._quiet.allows("closed"):
            logger.info("%s closed", waiting.name)
        self._closed()

    def accepts_now(self, setting_up: int) -> int:
        """How many connections to accept in this turn of the event loop, setting_up being
        accepted already: up to 1/TURNS_OF_GRACE of the places to wait, and once they are
        all taken, only as many as the door may drop to make room (GRACE_SECONDS)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        refill = (now - self._refilled_at) * self.limits.max_unauthenticated / GRACE_SECONDS
        self._room_to_make = min(float(self._per_turn()), self._room_to_make + refill)
        self._refilled_at = now
        room = max(0, self.limits.max_unauthenticated - len(self.waiting) - setting_up)
        allowed = min(self._per_turn(), room + max(0, int(self._room_to_make)))
        # Each one past the room pushes one out: one waiting, or (TLS) one in its handshake.
        self._room_to_make -= max(0, allowed - room)
        return allowed

    def _per_turn(self) -> int:
        share = self.limits.max_unauthenticated // TURNS_OF_GRACE
        return max(1, min(MOST_ACCEPTS_PER_TURN, share))

    def admit(self, arrival: Arrival) -> None:
        """Make a waiting connection a member, now that its token is valid; DaemonFull if
        every member's place is taken."""
        if len(self.members) >= self.limits.max_connections:
            raise DaemonFull(f"the daemon has {at_the_cap(self.limits)}: try later")
        self.waiting.pop(arrival, None)
        self.members.add(arrival)

    def leave(self, arrival: Arrival) -> bool:
        """Forget a connection that is closing; True if it was a member."""
        self.waiting.pop(arrival, None)
        if arrival in self.members:
            self.members.discard(arrival)
            return True
        return False

    def see_out(self, writer: asyncio.StreamWriter, why: str) -> None:
        """Tell a connection why it is refused and end it, closing the longest lingering
        refusal if as many linger as may wait."""
        if len(self.lingering) >= self.limits.max_unauthenticated:
            next(iter(self.lingering)).close()  # its client has had its message a while
        self.lingering[writer.transport] = None
        see_out(writer, why, self._ended)

    def close(self) -> None:
        """Close every waiting connection and lingering refusal (the daemon is stopping)."""
        self.closing = True
        if self._sweeping is not None:
            self._sweeping.cancel()
        for arrival in list(self.waiting):
            if arrival.writer is not None:
                arrival.writer.transport.abort()
        for transport in list(self.lingering):
            transport.close()

    def _turn_away(self, arrival: Arrival, event: str, why: str) -> None:
        """Stop serving a waiting connection, and see it out, telling it why."""
        waiting = self.waiting.pop(arrival)
        if waiting.task is not None:
            waiting.task.cancel()  # the task leaves the connection to the door (seen_out)
        if arrival.writer is None:
            return  # its client has gone already, and its task with it: nobody to tell
        if self._quiet.allows(event):
            logger.info("%s %s: %s", waiting.name, event, why)
        self.see_out(arrival.writer, f"{event}: {why}")
        arrival.connection_lost(None)  # its socket is see_out's now: the stream has ended

    def _sweep(self) -> None:
        """Time out the connections whose handshake time is up: the longest waiting first."""
        self._sweeping = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        for _ in range(TIMEOUTS_PER_TURN):
            if not self.waiting:
                return
            arrival, waiting = next(iter(self.waiting.items()))
            if waiting.deadline > now:
                self._sweeping = loop.call_at(waiting.deadline, self._sweep)
                return
            self._turn_away(arrival, "timed out", handshake_timed_out(self.limits))
        self._sweeping = loop.call_soon(self._sweep)

    def _ended(self, transport: asyncio.BaseTransport) -> None:
        self.lingering.pop(transport, None)
        self._closed()


def at_the_cap(limits: ConnectionLimits) -> str:
    """Why a member over the cap is refused."""
    open_now = counted(limits.max_connections, "connection")
    return f"{open_now} with a valid token open, the limit ([engine] max_connections)"


def made_room(limits: ConnectionLimits) -> str:
    """Why the connection that waited longest for its token was dropped."""
    count = limits.max_unauthenticated
    return (
        f"a newer connection took its place: {count} {'were' if count != 1 else 'was'} "
        "waiting for a token, the limit ([engine] max_unauthenticated_connections); send "
        "initialize with a valid token as soon as you connect"
    )


def sockets_needed(limits: ConnectionLimits) -> int:
    """The file descriptors a daemon with these limits may hold at once, at most: members,
    those waiting, as many lingering, and over TLS as many in their TLS handshake."""
    return limits.max_connections + 3 * limits.max_unauthenticated + SPARE_SOCKETS


def raise_file_limit(limits: ConnectionLimits) -> None:
    """Raise this process's open-file limit to what the limits need, if the system allows;
    warn if it does not: a daemon out of descriptors stops accepting for a moment at a
    time, members included."""
    needed = sockets_needed(limits)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        wanted = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        soft = wanted
    if soft != resource.RLIM_INFINITY and soft < needed:
        logger.warning(
            "the open-file limit (%d) is below the %d that max_connections and "
            "max_unauthenticated_connections may take: raise `ulimit -n` or lower them",
            soft,
            needed,
        )
