"""One LISTEN connection per process: PostgreSQL notifications by channel.

Every cross-process wake-up in the product is a NOTIFY sent in the writer's
transaction (so it arrives only if, and when, the change commits): content
changes and realtime presence, mta's change log (JMAP push, webmail's live
updates), mta's event log (webhook fan-out) and the outbound queue. Each
process hears them all on one dedicated connection held here, instead of a
LISTEN loop per feature, each with its own retry policy and its own
connection (five, once, two of them on the same channel).

Subscribers register a callback per channel. Callbacks run on the event loop
and must not block: they set an event, put on a queue, bump a counter.
When the connection is lost (a database restart, a failover, a killed
backend), the hub reconnects with one backoff policy, LISTENs again on every
channel, and then calls each subscriber's ``on_gap``: notifications sent
while nobody listened are lost, so every subscriber re-reads what it watches.

The hub can also hold a session-level advisory lock on its connection, for
"exactly one process does this" (JMAP's push POSTs): the lock lives and dies
with the connection, so a crashed holder releases it.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import aiopg

log = logging.getLogger(__name__)

# Reconnect backoff: doubling from the first delay up to the cap, with jitter
# so a restarted database is not hit by every process at the same instant.
RETRY_FIRST_SECONDS = 0.2
RETRY_MAX_SECONDS = 5.0
# ``running()`` waits this long for the first LISTEN before serving anyway.
READY_SECONDS = 5.0
STOP_SECONDS = 2.0

Callback = Callable[[str], None]


@dataclass(eq=False)
class Subscription:
    """One subscriber's callbacks on one channel; ``close()`` ends it."""

    hub: NotificationHub
    channel: str
    on_message: Callback
    on_gap: Callable[[], None] | None = None

    def close(self) -> None:
        self.hub._remove(self)


@dataclass
class _Lock:
    key: int
    held: bool = field(default=False)


def _valid_channel(channel: str) -> str:
    # LISTEN takes an identifier, not a parameter: only our own plain names.
    if not channel or not all(c.isalnum() or c == "_" for c in channel):
        raise ValueError(f"not a channel name: {channel!r}")
    return channel


class NotificationHub:
    """The process's LISTEN connection and its subscribers, by channel."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._subs: dict[str, list[Subscription]] = {}
        self._locks: dict[int, _Lock] = {}
        self._listening: set[str] = set()
        self._conn: aiopg.Connection | None = None
        self._conn_lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._users = 0
        self.ready = asyncio.Event()
        # Times the connection was (re)established: tests and metrics read it.
        self.connects = 0

    # -- subscribers ---------------------------------------------------------

    def subscribe(
        self,
        channel: str,
        on_message: Callback,
        *,
        on_gap: Callable[[], None] | None = None,
    ) -> Subscription:
        """Hear ``channel``'s payloads. LISTEN starts at once if connected."""
        sub = Subscription(self, _valid_channel(channel), on_message, on_gap)
        self._subs.setdefault(channel, []).append(sub)
        if self._conn is not None and channel not in self._listening:
            asyncio.get_running_loop().create_task(self._listen(channel))
        return sub

    def _remove(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.channel)
        if subs is not None and sub in subs:
            subs.remove(sub)
        # The channel stays LISTENed: an idle channel costs nothing, and
        # UNLISTEN racing a new subscriber would lose its notifications.

    async def hold_lock(self, key: int) -> bool:
        """Try a session advisory lock now if connected, and on every reconnect;
        return whether this process holds it now (see :meth:`holds`)."""
        lock = self._locks.setdefault(key, _Lock(key))
        if not lock.held:
            await self._try_lock(lock)
        return lock.held

    def holds(self, key: int) -> bool:
        lock = self._locks.get(key)
        return lock is not None and lock.held

    # -- lifecycle -----------------------------------------------------------

    @asynccontextmanager
    async def running(self) -> AsyncIterator[NotificationHub]:
        """Keep the connection up for the block; shared by every user in the process.

        The first user starts it (and waits, bounded, until it listens, so no
        change committed after start-up goes unheard); the last one stops it.
        """
        self._users += 1
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="notify-hub")
        try:
            try:
                await asyncio.wait_for(self.ready.wait(), timeout=READY_SECONDS)
            except TimeoutError:
                log.warning("notification hub is not connected yet; serving anyway")
            yield self
        finally:
            self._users -= 1
            if self._users == 0:
                await self._stop()

    async def _stop(self) -> None:
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        # Bounded: aiopg can leave a connect cancelled mid-handshake waiting
        # forever, and shutdown must not wait with it.
        done, _ = await asyncio.wait({task}, timeout=STOP_SECONDS)
        if not done:
            log.warning("notification hub did not stop in time; left behind")
        self.ready.clear()

    # -- the connection ------------------------------------------------------

    async def _listen(self, channel: str) -> None:
        async with self._conn_lock:
            conn = self._conn
            if conn is None or channel in self._listening:
                return  # the next connect LISTENs on every channel
            try:
                async with conn.cursor() as cur:
                    await cur.execute(f"LISTEN {channel}")
                self._listening.add(channel)
            except Exception:
                log.warning("LISTEN %s failed; retried on reconnect", channel, exc_info=True)

    async def _try_lock(self, lock: _Lock) -> None:
        async with self._conn_lock:
            if self._conn is None:
                return  # the next connect tries it
            try:
                async with self._conn.cursor() as cur:
                    await self._lock_on(cur, lock)
            except Exception:
                log.warning("advisory lock %s not tried; retried on reconnect", lock.key)

    async def _lock_on(self, cur: aiopg.Cursor, lock: _Lock) -> None:
        await cur.execute("SELECT pg_try_advisory_lock(%s)", (lock.key,))
        row = await cur.fetchone()
        lock.held = bool(row and row[0])

    async def _run(self) -> None:
        delay = RETRY_FIRST_SECONDS
        while True:
            try:
                async with aiopg.connect(self.dsn) as conn:
                    await self._connected(conn)
                    delay = RETRY_FIRST_SECONDS
                    while True:
                        note = await conn.notifies.get()
                        self._dispatch(note.channel, note.payload)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("notification hub lost its connection; reconnecting", exc_info=True)
            finally:
                self._disconnected()
            await asyncio.sleep(delay * (0.5 + random.random() / 2))  # noqa: S311 (jitter)
            delay = min(delay * 2, RETRY_MAX_SECONDS)

    async def _connected(self, conn: aiopg.Connection) -> None:
        async with self._conn_lock:
            async with conn.cursor() as cur:
                for channel in list(self._subs):
                    await cur.execute(f"LISTEN {channel}")
                for lock in self._locks.values():
                    await self._lock_on(cur, lock)
            self._listening = set(self._subs)
            self._conn = conn
        self.connects += 1
        self.ready.set()
        # Whatever was sent while nobody listened is gone: every subscriber
        # re-reads what it watches (also on the very first connect, which
        # closes the window between a subscriber's start and LISTEN).
        for subs in list(self._subs.values()):
            for sub in list(subs):
                if sub.on_gap is not None:
                    self._call(sub.channel, sub.on_gap)

    def _disconnected(self) -> None:
        self._conn = None
        self._listening = set()
        self.ready.clear()
        for lock in self._locks.values():
            lock.held = False

    def _dispatch(self, channel: str, payload: str) -> None:
        for sub in list(self._subs.get(channel, ())):
            self._call(channel, lambda sub=sub: sub.on_message(payload))  # type: ignore[misc]

    @staticmethod
    def _call(what: str, callback: Callable[[], object]) -> None:
        # One failing subscriber never stops the others or the connection.
        try:
            callback()
        except Exception:
            log.exception("notification subscriber on %s failed", what)
