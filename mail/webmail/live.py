"""Live updates: server-sent events over the store's change log.

Every change the store logs (a delivery over SMTP, a JMAP client's Email/set,
this webmail's own writes) fires ``NOTIFY mta_changes, '<address id>'`` on
commit, from whichever process wrote it (mta/migrations/0010_jmap.sql). The
process's notification hub (common/notify.py) hears it, and wakes the streams
of that mailbox; a stream then sends one
``change`` event carrying the mailbox's Email and Mailbox states (the same
strings JMAP answers), so a page refreshes what it shows and nothing else.
A comment line every 25 seconds keeps proxies from closing an idle stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from aiohttp import web

from common.notify import NotificationHub, Subscription
from mail.context import MailContext
from mta import mailstore

KEEPALIVE_SECONDS = 25.0


class Hub:
    """This process's open streams by mailbox, woken through the notification hub."""

    def __init__(self, notifications: NotificationHub) -> None:
        self.notifications = notifications
        self.listeners: dict[str, set[asyncio.Queue[None]]] = {}
        self.subscription: Subscription | None = None
        # Set at shutdown: every stream ends at once (see end_streams).
        self.closing = False

    async def ensure_started(self) -> None:
        # Subscribed when the first stream opens: a process serving no
        # webmail hears nothing of the change log.
        if self.subscription is None:
            self.subscription = self.notifications.subscribe(
                mailstore.CHANGES_CHANNEL, self.publish, on_gap=self.publish_all
            )

    def subscribe(self, address_id: str) -> asyncio.Queue[None]:
        queue: asyncio.Queue[None] = asyncio.Queue(maxsize=1)
        self.listeners.setdefault(address_id, set()).add(queue)
        return queue

    def unsubscribe(self, address_id: str, queue: asyncio.Queue[None]) -> None:
        found = self.listeners.get(address_id)
        if found is not None:
            found.discard(queue)
            if not found:
                del self.listeners[address_id]

    def publish(self, address_id: str) -> None:
        for queue in self.listeners.get(address_id, ()):
            # A full queue already holds a wake-up: changes coalesce.
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)

    def publish_all(self) -> None:
        """After a lost connection every stream re-reads its states."""
        for address_id in list(self.listeners):
            self.publish(address_id)

    async def end_streams(self, _app: web.Application | None = None) -> None:
        """Shutdown: every open stream ends now (the page's EventSource
        reconnects, to a process still serving); left open, the streams held
        a graceful stop for its whole timeout."""
        self.closing = True
        self.publish_all()

    async def stop(self, _app: web.Application | None = None) -> None:
        if self.subscription is not None:
            self.subscription.close()
            self.subscription = None


HUB = web.AppKey("mail.webmail.hub", Hub)


def install(app: web.Application, notifications: NotificationHub) -> None:
    hub = Hub(notifications)
    app[HUB] = hub
    app.on_shutdown.append(hub.end_streams)
    app.on_cleanup.append(hub.stop)


async def states(ctx: MailContext, address_id: str) -> dict[str, str]:
    async with ctx.db.connection() as conn:
        return {
            "email": await mailstore.email_state(conn, address_id, "Email"),
            "folders": await mailstore.email_state(conn, address_id, "Mailbox"),
        }


async def stream(request: web.Request, ctx: MailContext, address_id: str) -> web.StreamResponse:
    hub = request.app[HUB]
    await hub.ensure_started()
    queue = hub.subscribe(address_id)
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",
        }
    )
    try:
        await response.prepare(request)
        last = await states(ctx, address_id)
        await response.write(f"event: ready\ndata: {json.dumps(last)}\n\n".encode())
        while not hub.closing:
            try:
                await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
            except TimeoutError:
                await response.write(b": keepalive\n\n")
                continue
            if hub.closing:
                break
            now = await states(ctx, address_id)
            if now != last:
                last = now
                await response.write(f"event: change\ndata: {json.dumps(now)}\n\n".encode())
    except ConnectionResetError:
        pass  # the page went away
    finally:
        hub.unsubscribe(address_id, queue)
    return response
