"""The realtime socket's rules: tickets, topics and their permissions, the per-process hub.

A credential is exchanged for a ticket (single use, 30 seconds, stored as its
SHA-256 in PostgreSQL so any gateway process can redeem it). The socket then
subscribes to topics; each process's :class:`Hub` hears every content change
(its own commits and, through LISTEN/NOTIFY, every other process's) and puts
a frame naming the entry, never its content, on each subscribed socket's
bounded queue. Presence on ``entry:<id>`` lives in ``content.realtime_presence``
and is announced on the ``content_presence`` channel, so viewers on every
process see each other. Full rules: docs/content.md, "Realtime socket".
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from aiohttp import WSMsgType, web

from common import metrics
from common.clock import Clock
from common.crypto import sha256_hex
from common.db import Database, execute
from common.ids import prefixed_token, short_id
from content.changes import Changes
from content.context import Context
from content.entries.events import change_events, public_event
from content.errors import Unauthorized
from content.keys.service import ALL_TYPES
from content.keys.store import DeliveryKey
from content.realtime import store
from content.realtime.store import Viewer
from content.webhooks.events import SITE_EVENTS, SOCIAL_EVENTS

TICKET_PREFIX = "rtk_"
TICKET_SECONDS = 30
# Frames waiting for one socket. A client that falls this far behind is
# disconnected (close 1013) and its queue freed: it reconnects and re-reads.
QUEUE_LIMIT = 256
MAX_TOPICS = 100
# Client frames are small JSON objects; a larger one closes the socket (1009).
MAX_FRAME_BYTES = 4096
HEARTBEAT_SECONDS = 30.0
PRESENCE_CHANNEL = "content_presence"
PRESENCE_REFRESH_SECONDS = 30.0
# A presence row not refreshed for this long belongs to a process that died.
PRESENCE_STALE_SECONDS = 90
SLOW_CLIENT_CLOSE = 1013  # "try again later"

log = logging.getLogger(__name__)


class FrameError(Exception):
    """A client frame refused with an error frame; the socket stays open."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Client:
    """One open socket: who holds it, its topics and its bounded queue of frames."""

    kind: str  # "session" or "delivery"
    viewer: Viewer | None = None
    session_id: int | None = None
    key: DeliveryKey | None = None
    id: str = field(default_factory=short_id)
    topics: set[str] = field(default_factory=set)
    queue: asyncio.Queue[dict[str, Any] | None] = field(
        default_factory=lambda: asyncio.Queue(QUEUE_LIMIT)
    )
    dropped: bool = False

    def send(self, frame: dict[str, Any]) -> None:
        """Queue a frame; a full queue drops the client, never grows."""
        if self.dropped:
            return
        try:
            self.queue.put_nowait(frame)
        except asyncio.QueueFull:
            self.dropped = True
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)  # the writer closes the socket


def may_read_type(key: DeliveryKey, type_name: str) -> bool:
    return ALL_TYPES in key.type_scopes or type_name in key.type_scopes


def topic_error(client: Client, topic: str) -> FrameError | None:
    """Why ``client`` may not subscribe to ``topic`` (spec, Authentication rule 8)."""
    kind, _, name = topic.partition(":")
    if topic == "site":
        return None
    if kind == "content" and name:
        if client.key is not None and not may_read_type(client.key, name):
            return FrameError("FORBIDDEN", f"this delivery key is not scoped to {name}")
        return None
    if kind == "entry" and name:
        if client.kind != "session":
            return FrameError("FORBIDDEN", "entry topics are open to signed-in people only")
        return None
    return FrameError("UNKNOWN_TOPIC", "topics are site, content:<type> and entry:<id>")


# --- tickets ---------------------------------------------------------------------


async def mint_ticket(
    ctx: Context, *, session_id: int | None = None, key_id: str | None = None
) -> tuple[str, datetime]:
    ticket = prefixed_token(TICKET_PREFIX)
    now = ctx.clock.now()
    expires_at = now + timedelta(seconds=TICKET_SECONDS)
    async with ctx.db.connection() as conn:
        await store.insert_ticket(
            conn,
            sha256_hex(ticket),
            kind="session" if session_id is not None else "delivery",
            session_id=session_id,
            delivery_key_id=key_id,
            now=now,
            expires_at=expires_at,
        )
    return ticket, expires_at


async def redeem_ticket(ctx: Context, ticket: str) -> Client:
    """The socket's holder; the ticket is gone afterwards, used or not."""
    invalid = Unauthorized("the ticket is unknown, used or expired", "TICKET_INVALID")
    if not ticket.startswith(TICKET_PREFIX):
        raise invalid
    now = ctx.clock.now()
    async with ctx.db.connection() as conn:
        found = await store.take_ticket(conn, sha256_hex(ticket))
        if found is None or found.expires_at <= now:
            raise invalid
        if found.session_id is not None:
            viewer = await store.session_user(conn, found.session_id, now)
            if viewer is not None:
                return Client(kind="session", viewer=viewer, session_id=found.session_id)
        elif found.delivery_key_id is not None:
            key = await store.live_delivery_key(conn, found.delivery_key_id)
            if key is not None:
                return Client(kind="delivery", key=key)
    # The session ended or the key was revoked since the ticket was made.
    raise invalid


# --- the hub ---------------------------------------------------------------------


def _entry_data(event: dict[str, Any]) -> dict[str, Any]:
    return {"id": event["id"], "slug": event.get("slug"), "type": event.get("type")}


class Hub:
    """This process's open sockets, fed by the change feed."""

    def __init__(self, db: Database, clock: Clock, changes: Changes) -> None:
        self.db = db
        self.clock = clock
        self.clients: dict[str, Client] = {}
        self._sockets: dict[str, web.WebSocketResponse] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        changes.subscribe(self.on_change)
        changes.on_channel(PRESENCE_CHANNEL, self.on_presence)

    # --- events in ---

    def on_change(self, event: dict[str, Any]) -> None:
        """People hear every event of an entry change; a delivery key only its public
        one, about a type it reads (content/entries/events.py, as webhooks)."""
        if event.get("event") in SITE_EVENTS or event.get("event") in SOCIAL_EVENTS:
            self._site_change(event)
            return
        names = change_events(event)
        if not names or "id" not in event:
            return
        public = public_event(event)
        topics = ("site", f"content:{event.get('type')}", f"entry:{event['id']}")
        for client in list(self.clients.values()):
            told: tuple[str, ...] = names
            if client.key is not None:
                readable = may_read_type(client.key, str(event.get("type")))
                told = (public,) if public is not None and readable else ()
            for topic in topics:
                if topic not in client.topics:
                    continue
                for name in told:
                    client.send({"topic": topic, "event": name, "data": _entry_data(event)})

    def _site_change(self, event: dict[str, Any]) -> None:
        """A design override, a plugin's state or a social change: people on ``site``, never keys."""
        kind = next(k for k in ("design", "socialPost", "socialAccount", "plugin") if k in event)
        frame = {
            "topic": "site",
            "event": event["event"],
            "data": {"id": event.get(kind), "slug": None, "type": kind},
        }
        for client in list(self.clients.values()):
            if client.kind == "session" and "site" in client.topics:
                client.send(frame)

    def on_presence(self, payload: str) -> None:
        topic = f"entry:{payload}"
        if any(topic in c.topics for c in self.clients.values()):
            self._spawn(self._announce(payload))

    async def _announce(self, entry_id: str) -> None:
        since = self.clock.now() - timedelta(seconds=PRESENCE_STALE_SECONDS)
        try:
            async with self.db.connection() as conn:
                viewers = await store.viewers(conn, entry_id, since)
        except Exception:
            log.exception("reading realtime presence failed")
            return
        topic = f"entry:{entry_id}"
        frame = {
            "topic": topic,
            "event": "presence",
            "data": {"id": entry_id, "viewers": [{"id": v.id, "name": v.name} for v in viewers]},
        }
        for client in list(self.clients.values()):
            if topic in client.topics:
                client.send(frame)

    def _spawn(self, work: Any) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # --- presence rows ---

    async def _presence(self, client: Client, entry_id: str, *, joining: bool) -> None:
        async with self.db.transaction() as conn:
            if joining:
                assert client.viewer is not None
                await store.join(conn, client.id, entry_id, client.viewer.id, self.clock.now())
            else:
                await store.leave(conn, client.id, entry_id)
            # Sent at commit, heard by every process (this one too).
            await execute(conn, "SELECT pg_notify(%s, %s)", (PRESENCE_CHANNEL, entry_id))

    async def refresh_forever(self) -> None:
        """Keep this process's presence rows fresh; a dead process's go stale."""
        while True:
            await asyncio.sleep(PRESENCE_REFRESH_SECONDS)
            ids = [c.id for c in self.clients.values() if c.viewer is not None]
            if not ids:
                continue
            try:
                async with self.db.connection() as conn:
                    await store.refresh(conn, ids, self.clock.now())
            except Exception:
                log.exception("refreshing realtime presence failed")

    # --- one socket ---

    async def serve(self, ws: web.WebSocketResponse, client: Client) -> None:
        self.clients[client.id] = client
        self._sockets[client.id] = ws
        writer = asyncio.create_task(self._write(ws, client))
        client.send({"type": "ready", "credential": client.kind})
        metrics.REALTIME_CONNECTIONS.inc()
        try:
            async for message in ws:
                if message.type == WSMsgType.TEXT:
                    await self._frame(client, message.data)
                elif message.type == WSMsgType.BINARY:
                    client.send(_error("BAD_FRAME", "frames are JSON text"))
        finally:
            metrics.REALTIME_CONNECTIONS.dec()
            del self.clients[client.id]
            del self._sockets[client.id]
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer
            for topic in client.topics:
                if topic.startswith("entry:") and client.viewer is not None:
                    with contextlib.suppress(Exception):
                        await self._presence(client, topic[6:], joining=False)

    async def _write(self, ws: web.WebSocketResponse, client: Client) -> None:
        while True:
            frame = await client.queue.get()
            if frame is None:
                await ws.close(code=SLOW_CLIENT_CLOSE, message=b"too slow; reconnect and re-read")
                return
            try:
                await ws.send_json(frame)
            except (ConnectionError, RuntimeError):
                return

    async def _frame(self, client: Client, text: str) -> None:
        reply: dict[str, Any] | None
        try:
            reply = await self._handle(client, text)
        except FrameError as exc:
            reply = _error(exc.code, exc.message)
        if reply is not None:
            client.send(reply)

    async def _handle(self, client: Client, text: str) -> dict[str, Any] | None:
        try:
            frame = json.loads(text)
        except ValueError:
            raise FrameError("BAD_FRAME", "a frame is a JSON object") from None
        if not isinstance(frame, dict):
            raise FrameError("BAD_FRAME", "a frame is a JSON object")
        action = frame.get("action")
        if action == "ping":
            return {"type": "pong"}
        if action not in ("subscribe", "unsubscribe"):
            raise FrameError("BAD_FRAME", "action is subscribe, unsubscribe or ping")
        topic = frame.get("topic")
        if not isinstance(topic, str) or not topic or len(topic) > 200:
            raise FrameError("BAD_FRAME", f"{action} needs a topic")
        entry_id = topic[6:] if topic.startswith("entry:") else None
        if action == "unsubscribe":
            if topic in client.topics:
                client.topics.discard(topic)
                if entry_id is not None:
                    await self._presence(client, entry_id, joining=False)
            return {"type": "unsubscribed", "topic": topic}
        await self._recheck(client)
        problem = topic_error(client, topic)
        if problem is not None:
            raise problem
        if topic not in client.topics:
            if len(client.topics) >= MAX_TOPICS:
                raise FrameError("TOO_MANY_TOPICS", f"at most {MAX_TOPICS} topics per socket")
            if entry_id is not None:
                async with self.db.connection() as conn:
                    if not await store.entry_exists(conn, entry_id):
                        raise FrameError("NOT_FOUND", "no such entry")
            client.topics.add(topic)
            if entry_id is not None:
                # Subscribed first, so this socket hears the presence frame too.
                client.send({"type": "subscribed", "topic": topic})
                await self._presence(client, entry_id, joining=True)
                return None
        return {"type": "subscribed", "topic": topic}

    async def _recheck(self, client: Client) -> None:
        """Re-read the credential at each subscribe: a revoked key or ended session
        gets no new topics, and a key's narrowed scopes apply at once."""
        async with self.db.connection() as conn:
            if client.key is not None:
                key = await store.live_delivery_key(conn, client.key.id)
                if key is not None:
                    client.key = key
                    return
            elif client.session_id is not None and await store.session_user(
                conn, client.session_id, self.clock.now()
            ):
                return
        # Nothing more for this socket: its topics go with the credential.
        client.topics.clear()
        raise FrameError("CREDENTIAL_REVOKED", "the session ended or the key was revoked")

    async def close_all(self) -> None:
        """At shutdown: close every socket (1001 going away) so the server can stop."""
        for ws in list(self._sockets.values()):
            with contextlib.suppress(Exception):
                await ws.close(code=1001, message=b"server shutting down")


def _error(code: str, message: str) -> dict[str, Any]:
    return {"type": "error", "code": code, "error": message, "details": {}}


# The process's hub, on every app the CMS builds (content/service.py).
HUB = web.AppKey("content_realtime_hub", Hub)
