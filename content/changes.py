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

import json
import logging
from collections.abc import Callable
from typing import Any

from common.db import Conn, execute
from common.ids import short_id
from common.notify import NotificationHub

log = logging.getLogger(__name__)

CHANNEL = "content_changes"

Listener = Callable[[dict[str, Any]], None]


async def notify(conn: Conn, origin: str, event: str, **data: Any) -> None:
    """Queue a change notification; Postgres sends it when the transaction commits."""
    payload = json.dumps({"origin": origin, "event": event, **data}, default=str)
    await execute(conn, "SELECT pg_notify(%s, %s)", (CHANNEL, payload))


class Changes:
    """The per-process counter, fed by local commits and by other processes.

    Other processes' commits arrive through the process's notification hub
    (common/notify.py), which the service's lifespan keeps running.
    """

    def __init__(self, notifications: NotificationHub) -> None:
        # Identifies this process's own notifications, already counted locally.
        self.origin = short_id()
        self._version = 0
        self._listeners: list[Listener] = []
        # Work that runs once per change in the deployment: this process's own
        # commits only (plugin hooks, content/plugins/service.py).
        self._committed: list[Listener] = []
        self._notifications = notifications
        # A reconnect may have missed changes: count one, so caches empty.
        notifications.subscribe(
            CHANNEL, self.received, on_gap=lambda: self._bump({"event": "resync"})
        )

    def version(self) -> int:
        return self._version

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def on_commit(self, listener: Listener) -> None:
        """Hear the changes committed by this process only, after the commit."""
        self._committed.append(listener)

    def on_channel(self, channel: str, callback: Callable[[str], None]) -> None:
        """Hear another channel's raw payloads that do not move the version
        (the realtime socket's presence), on the same connection."""
        self._notifications.subscribe(channel, callback)

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
