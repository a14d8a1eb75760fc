"""Push (RFC 8620 7): StateChange over EventSource and to PushSubscription URLs.

Every change the store logs (``mta.changes``) fires ``NOTIFY mta_changes,
'<address id>'`` once per statement and account (trigger in migration 0010),
whichever process wrote it: the inbound SMTP daemon, another JMAP process,
the webmail. The process's notification hub (common/notify.py) hears it and
:class:`Hub` hands it to the event streams open for that account; a
stream then reads the account's states (one indexed look-up per type) and
sends a ``state`` event for the types whose state moved.

PushSubscription URLs get the same StateChange objects, POSTed through the
SSRF-safe client (common/outbound.py). Only the process holding the
``jmap-push`` advisory lock on its notification connection posts, so several JMAP
processes do not push the same change twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Iterable
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from aiohttp import web

from common import metrics
from common.db import Conn
from common.notify import Subscription
from common.outbound import OutboundClient
from mail import directory
from mta.jmap import methods
from mta.jmap.context import JmapContext
from mta.jmap.registry import CORE, MethodCall, Principal, SetResponse, register, set_error
from mta.store import changes, push_subscriptions

log = logging.getLogger(__name__)

CHANNEL = "mta_changes"
PUSH_LOCK = 0x6A6D6170  # "jmap": the advisory lock of the process that POSTs pushes
TYPES = (
    "Email",
    "Mailbox",
    "Thread",
    "Identity",
    "VacationResponse",
    "EmailDelivery",
    "EmailSubmission",
)
MAX_SUBSCRIPTION_DAYS = 7
MAX_SUBSCRIPTIONS = 50


async def account_states(conn: Conn, address_id: str) -> dict[str, str]:
    """Every pushable type's state for one account (one backward index scan per type)."""
    states = await changes.states(conn, address_id)
    return {t: states[t] for t in TYPES}


class Hub:
    """This process's push streams by account, fed by the notification hub (common/notify.py)."""

    def __init__(self, ctx: JmapContext) -> None:
        self.ctx = ctx
        self.listeners: dict[str, set[asyncio.Queue[str]]] = {}
        self.pusher: Pusher | None = None
        self.notifications = ctx.runtime.notifications
        self._running: contextlib.AbstractAsyncContextManager[object] | None = None
        self._subscription: Subscription | None = None
        # Streams that have read their starting states, by address (readiness, tests).
        self.streaming: dict[str, int] = {}
        self.joined = asyncio.Event()
        # Set at shutdown: every stream ends at once (see end_streams).
        self.closing = False

    def subscribe(self, address_ids: Iterable[str]) -> asyncio.Queue[str]:
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=1000)
        for address_id in address_ids:
            self.listeners.setdefault(address_id, set()).add(queue)
        return queue

    def started(self, address_ids: Iterable[str], delta: int = 1) -> None:
        for address_id in address_ids:
            count = self.streaming.get(address_id, 0) + delta
            if count > 0:
                self.streaming[address_id] = count
            else:
                self.streaming.pop(address_id, None)
        self.joined.set()

    async def listening(self, address_id: str) -> None:
        """Until a stream of this process watches ``address_id`` from its starting states."""
        while address_id not in self.streaming:
            self.joined.clear()
            await self.joined.wait()

    def unsubscribe(self, address_ids: Iterable[str], queue: asyncio.Queue[str]) -> None:
        for address_id in address_ids:
            found = self.listeners.get(address_id)
            if found is not None:
                found.discard(queue)
                if not found:
                    del self.listeners[address_id]

    def end_streams(self) -> None:
        """Shutdown: every open stream ends now, and one opened later ends at
        once. An EventSource client reconnects (to a process still serving);
        left open, the streams held a graceful stop for its whole timeout."""
        self.closing = True
        for address_id in list(self.listeners):
            for queue in self.listeners.get(address_id, ()):
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait(address_id)

    def publish(self, address_id: str) -> None:
        for queue in self.listeners.get(address_id, ()):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(address_id)
        if self.is_pusher and self.pusher is not None:
            self.pusher.changed(address_id)

    @property
    def is_pusher(self) -> bool:
        """This process holds the push lock on its notification connection."""
        return self.notifications.holds(PUSH_LOCK)

    def resync(self) -> None:
        """After a lost connection, streams re-read their states (a change may be missed)."""
        for address_id in list(self.listeners):
            self.publish(address_id)

    async def start(self) -> None:
        self.pusher = Pusher(self.ctx)
        self._subscription = self.notifications.subscribe(CHANNEL, self.publish, on_gap=self.resync)
        self._running = self.notifications.running()
        await self._running.__aenter__()
        await self.notifications.hold_lock(PUSH_LOCK)

    async def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
        if self._running is not None:
            await self._running.__aexit__(None, None, None)
            self._running = None
        if self.pusher is not None:
            await self.pusher.close()


# -- EventSource (RFC 8620 7.3) ----------------------------------------------------


def parse_types(value: str) -> set[str] | None:
    """``*`` -> None (all); else the named types we know."""
    if value.strip() in ("", "*"):
        return None
    return {t.strip() for t in value.split(",") if t.strip() in TYPES}


async def event_source(
    request: web.Request, ctx: JmapContext, hub: Hub, principal: Principal
) -> web.StreamResponse:
    types = parse_types(request.query.get("types", "*"))
    close_after = request.query.get("closeafter", "no")
    if close_after not in ("state", "no"):
        raise web.HTTPBadRequest(text="closeafter must be state or no")
    try:
        ping = int(request.query.get("ping", "0"))
    except ValueError:
        raise web.HTTPBadRequest(text="ping must be a number of seconds") from None
    if ping < 0:
        raise web.HTTPBadRequest(text="ping must not be negative")
    if ping:
        ping = max(ping, ctx.limits.min_ping_seconds)
    address_ids = {a.address_id: a.id for a in principal.accounts}
    async with ctx.runtime.db.connection() as conn:
        # The plan's jmap_push feature (mail/billing/), asked through the directory.
        if not await directory.push_allowed(conn, list(address_ids)):
            raise web.HTTPPaymentRequired(
                text="plan_required: the jmap_push feature is not included in your plan"
            )
    # Subscribed before reading the starting states: a change in between is
    # compared against them, never lost.
    queue = hub.subscribe(address_ids)
    started = False
    try:
        async with ctx.runtime.db.connection() as conn:
            last = {a: await account_states(conn, a) for a in address_ids}
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        hub.started(address_ids)
        started = True
        metrics.PUSH_CONNECTIONS.labels("eventsource").inc()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ctx.limits.max_stream_seconds
        while not hub.closing and loop.time() < deadline:
            timeout = min(ping or 60.0, deadline - loop.time())
            try:
                first = await asyncio.wait_for(queue.get(), timeout)
            except TimeoutError:
                if ping:
                    await response.write(_event("ping", {"interval": ping}))
                continue
            if hub.closing:
                break
            pending = {first}
            while not queue.empty():
                pending.add(queue.get_nowait())
            changed: dict[str, dict[str, str]] = {}
            async with ctx.runtime.db.connection() as conn:
                for address_id in pending:
                    now = await account_states(conn, address_id)
                    moved = {
                        t: s
                        for t, s in now.items()
                        if s != last[address_id].get(t) and (types is None or t in types)
                    }
                    last[address_id] = now
                    if moved:
                        changed[address_ids[address_id]] = moved
            if changed:
                await response.write(_event("state", {"@type": "StateChange", "changed": changed}))
                if close_after == "state":
                    break
        await response.write_eof()
        return response
    finally:
        hub.unsubscribe(address_ids, queue)
        if started:
            hub.started(address_ids, -1)
            metrics.PUSH_CONNECTIONS.labels("eventsource").dec()


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


# -- PushSubscription (RFC 8620 7.2) ------------------------------------------------

PROPERTIES = ("id", "deviceClientId", "url", "keys", "verificationCode", "expires", "types")


def _render(row: dict[str, Any], props: list[str]) -> dict[str, Any]:
    full = {
        "id": row["id"],
        "deviceClientId": row["device_client_id"],
        "url": row["url"],
        "keys": row["keys"],
        "verificationCode": row["verification_code"] if row["verified"] else None,
        "expires": None
        if row["expires"] is None
        else row["expires"].strftime("%Y-%m-%dT%H:%M:%SZ"),
        "types": row["types"],
    }
    return {p: full[p] for p in props}


async def push_get(call: MethodCall) -> dict[str, Any]:
    if "accountId" in call.arguments:
        call.fail("invalidArguments", "PushSubscription/get takes no accountId")
    ids = methods.get_ids(call)
    props = methods.properties(call, PROPERTIES)
    async with call.connection() as conn:
        rows = [asdict(p) for p in await push_subscriptions.list_for(conn, call.principal.key)]
    return methods.get_list(rows, ids, lambda row: _render(row, props))


def _expires(call: MethodCall, value: Any) -> Any:
    latest = call.now + timedelta(days=MAX_SUBSCRIPTION_DAYS)
    if value is None:
        return latest
    from datetime import datetime

    if not isinstance(value, str):
        raise ValueError
    when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if when.tzinfo is None:
        raise ValueError
    return min(max(when, call.now), latest)


def _types(value: Any) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ValueError
    return [t for t in value if t in TYPES]


def _url_ok(ctx: JmapContext, url: Any) -> bool:
    if not isinstance(url, str) or len(url) > 2048:
        return False
    if url.startswith("https://"):
        return True
    # Plain http only where private targets are allowed too (development, tests).
    return ctx.limits.push_allow_private and url.startswith("http://")


async def push_set(call: MethodCall) -> dict[str, Any]:
    if "accountId" in call.arguments:
        call.fail("invalidArguments", "PushSubscription/set takes no accountId")
    create, update, destroy = methods.set_arguments(call)
    principal = call.principal
    out = SetResponse()
    verify: list[tuple[str, str, str]] = []
    async with call.transaction() as conn:
        count = await push_subscriptions.count_for(conn, principal.key)
        for creation_id, values in create.items():
            bad = [
                k for k in values if k not in ("deviceClientId", "url", "keys", "expires", "types")
            ]
            if values.get("verificationCode") is not None:
                bad.append("verificationCode")
            if values.get("keys") is not None:
                bad.append("keys")  # RFC 8291 encryption is not supported: no silent plain text
            if not isinstance(values.get("deviceClientId"), str) or not values["deviceClientId"]:
                bad.append("deviceClientId")
            if not _url_ok(call.ctx, values.get("url")):
                bad.append("url")
            try:
                expires = _expires(call, values.get("expires"))
                types = _types(values.get("types"))
            except ValueError:
                bad.append("expires/types")
            if bad:
                out.not_created[creation_id] = set_error(
                    "invalidProperties", properties=sorted(set(bad))
                )
                continue
            if not await directory.push_allowed(conn, [a.address_id for a in principal.accounts]):
                out.not_created[creation_id] = set_error(
                    "forbidden", "plan_required: the jmap_push feature is not included in your plan"
                )
                continue
            if count >= MAX_SUBSCRIPTIONS:
                out.not_created[creation_id] = set_error("overQuota", "too many push subscriptions")
                continue
            code = secrets.token_urlsafe(24)
            sub_id = await push_subscriptions.create(
                conn,
                principal.key,
                address_ids=[a.address_id for a in principal.accounts],
                device_client_id=values["deviceClientId"][:255],
                url=values["url"],
                verification_code=code,
                expires=expires,
                types=types,
                now=call.now,
            )
            count += 1
            out.created[creation_id] = {
                "id": sub_id,
                "keys": None,
                "expires": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
            call.created(creation_id, sub_id)
            verify.append((sub_id, values["url"], code))
        for sub_id, patch in update.items():
            sub_id = call.resolve_id(sub_id)
            row = await push_subscriptions.find(conn, principal.key, sub_id)
            if row is None:
                out.not_updated[sub_id] = set_error("notFound")
                continue
            bad = [k for k in patch if k not in ("verificationCode", "expires", "types")]
            cols: dict[str, Any] = {}
            if "verificationCode" in patch:
                given = patch["verificationCode"]
                if not isinstance(given, str) or not secrets.compare_digest(
                    given, row.verification_code
                ):
                    bad.append("verificationCode")
                else:
                    cols["verified"] = True
            try:
                if "expires" in patch:
                    cols["expires"] = _expires(call, patch["expires"])
                if "types" in patch:
                    cols["types"] = _types(patch["types"])
            except ValueError:
                bad.append("expires/types")
            if bad:
                out.not_updated[sub_id] = set_error(
                    "invalidProperties", properties=sorted(set(bad))
                )
                continue
            if cols:
                await push_subscriptions.update(conn, sub_id, cols)
            out.updated[sub_id] = (
                {"expires": cols["expires"].strftime("%Y-%m-%dT%H:%M:%SZ")}
                if "expires" in cols
                else None
            )
        for sub_id in destroy:
            sub_id = call.resolve_id(sub_id)
            if await push_subscriptions.destroy(conn, principal.key, sub_id):
                out.destroyed.append(sub_id)
            else:
                out.not_destroyed[sub_id] = set_error("notFound")
    hub: Hub | None = call.ctx.hub
    for sub_id, url, code in verify:
        body = {"@type": "PushVerification", "pushSubscriptionId": sub_id, "verificationCode": code}
        if hub is not None and hub.pusher is not None:
            hub.pusher.send(url, body)
    return out.arguments()


class Pusher:
    """POSTs PushVerification and StateChange objects in the background, SSRF-safe."""

    def __init__(self, ctx: JmapContext) -> None:
        self.ctx = ctx
        self.client = OutboundClient(allow_private=ctx.limits.push_allow_private)
        self.tasks: set[asyncio.Task[None]] = set()
        self.last: dict[str, dict[str, str]] = {}

    def send(self, url: str, body: dict[str, Any]) -> None:
        task = asyncio.create_task(self._post(url, body))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def changed(self, address_id: str) -> None:
        task = asyncio.create_task(self._changed(address_id))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _changed(self, address_id: str) -> None:
        now = self.ctx.runtime.clock.now()
        async with self.ctx.runtime.db.connection() as conn:
            subs = await push_subscriptions.targets(conn, address_id, now)
            if not subs:
                return
            states = await account_states(conn, address_id)
        previous = self.last.get(address_id, {})
        self.last[address_id] = states
        for sub in subs:
            moved = {
                t: s
                for t, s in states.items()
                if s != previous.get(t) and (sub.types is None or t in sub.types)
            }
            if moved:
                await self._post(sub.url, {"@type": "StateChange", "changed": {address_id: moved}})

    async def _post(self, url: str, body: dict[str, Any]) -> None:
        try:
            answer = await self.client.post(
                url,
                json.dumps(body).encode(),
                {"Content-Type": "application/json", "TTL": "86400"},
            )
            if answer.status >= 300:
                log.info("push to a subscription answered %s", answer.status)
        except Exception as exc:  # an unreachable or refused target: the client re-subscribes
            log.info("push to a subscription failed: %s", type(exc).__name__)

    async def close(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        await self.client.close()


register("PushSubscription/get", push_get, capability=CORE)
register("PushSubscription/set", push_set, capability=CORE)
