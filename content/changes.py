"""The content version counter and the cross-process change notification.

Every content mutation calls :func:`notify` inside its own transaction, so
Postgres delivers ``NOTIFY content_changes`` to every listening process
exactly when (and only if) the change commits. Each process keeps a
process-local counter (:meth:`Changes.version`) that moves after its own
mutations and after every notification another process sends; hosts clear
delivery caches when it changes, and later work (realtime socket, cache
invalidation) subscribes to the same notifications.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import aiopg

from common.db import Conn, execute
from common.ids import short_id

log = logging.getLogger(__name__)

CHANNEL = "content_changes"
LISTENER_STOP_SECONDS = 2.0
# Start-up waits this long for LISTEN before serving anyway (and retrying).
LISTENER_READY_SECONDS = 5.0

Listener = Callable[[dict[str, Any]], None]


async def notify(conn: Conn, origin: str, event: str, **data: Any) -> None:
    """Queue a change notification; Postgres sends it when the transaction commits."""
    payload = json.dumps({"origin": origin, "event": event, **data}, default=str)
    await execute(conn, "SELECT pg_notify(%s, %s)", (CHANNEL, payload))


class Changes:
    """The per-process counter, fed by local commits and by other processes."""

    def __init__(self) -> None:
        # Identifies this process's own notifications, already counted locally.
        self.origin = short_id()
        self._version = 0
        self._listeners: list[Listener] = []
        # Work that runs once per change in the deployment: this process's own
        # commits only (plugin hooks, content/plugins/service.py).
        self._committed: list[Listener] = []
        # Other channels heard on the same connection that do not move the
        # version (the realtime socket's presence): channel -> callbacks.
        self._side: dict[str, list[Callable[[str], None]]] = {}

    def version(self) -> int:
        return self._version

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def on_commit(self, listener: Listener) -> None:
        """Hear the changes committed by this process only, after the commit."""
        self._committed.append(listener)

    def on_channel(self, channel: str, callback: Callable[[str], None]) -> None:
        """Hear ``channel``'s raw payloads too (register before :meth:`listening`)."""
        self._side.setdefault(channel, []).append(callback)

    def _side_message(self, channel: str, payload: str) -> None:
        for callback in list(self._side.get(channel, ())):
            try:
                callback(payload)
            except Exception:
                log.exception("%s listener failed", channel)

    def committed(self, event: dict[str, Any]) -> None:
        """A change made here has committed."""
        self._bump(event)
        for listener in list(self._committed):
            try:
                listener(event)
            except Exception:
                log.exception("content commit listener failed")

    def received(self, payload: str) -> None:
        try:
            event = json.loads(payload)
        except ValueError:
            log.warning("ignoring a malformed %s payload", CHANNEL)
            return
        if event.get("origin") == self.origin:
            return
        self._bump(event)

    def _bump(self, event: dict[str, Any]) -> None:
        self._version += 1
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:
                log.exception("content change listener failed")

    @asynccontextmanager
    async def listening(self, dsn: str) -> AsyncIterator[None]:
        """LISTEN on a dedicated connection for as long as the block runs.

        The block starts once LISTEN is in place, so no change committed after
        start-up goes unheard (and the listener is never cancelled mid-connect
        by a short-lived process).
        """
        ready = asyncio.Event()
        task = asyncio.create_task(self._listen_forever(dsn, ready), name="content-changes")
        try:
            try:
                await asyncio.wait_for(ready.wait(), timeout=LISTENER_READY_SECONDS)
            except TimeoutError:
                log.warning("content change listener is not connected yet; serving anyway")
            yield
        finally:
            task.cancel()
            # Bounded: aiopg can leave a connect cancelled mid-handshake
            # waiting forever, and shutdown must not wait with it.
            done, _ = await asyncio.wait({task}, timeout=LISTENER_STOP_SECONDS)
            if not done:
                log.warning("content change listener did not stop in time; left behind")

    async def _listen_forever(self, dsn: str, ready: asyncio.Event) -> None:
        while True:
            try:
                async with aiopg.connect(dsn) as conn:
                    async with conn.cursor() as cur:
                        await cur.execute(f"LISTEN {CHANNEL}")
                        for side in self._side:
                            await cur.execute(f"LISTEN {side}")
                    # Something may have changed while we were not listening.
                    self._bump({"event": "resync"})
                    ready.set()
                    while True:
                        message = await conn.notifies.get()
                        if message.channel == CHANNEL:
                            self.received(message.payload)
                        else:
                            self._side_message(message.channel, message.payload)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("content change listener lost its connection; reconnecting")
                await asyncio.sleep(1.0)
