"""JMAP over WebSocket (RFC 8887) at ``/jmap/ws``, subprotocol ``jmap``.

The upgrade request authenticates like any other (Basic or Bearer). Each text
frame is a Request (``"@type": "Request"``, optional ``id``) answered by a
Response carrying ``requestId``, or a RequestError (problem details with
``"@type": "RequestError"``). ``WebSocketPushEnable`` (optional
``dataTypes``) makes the socket carry StateChange objects from the same
notification hub as EventSource; ``WebSocketPushDisable`` stops them. Frames are
handled one at a time, each spending the principal's request budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from aiohttp import WSMsgType, web

from common import metrics
from common.ratelimit import RateLimiter
from mta.jmap import api, session
from mta.jmap.context import JmapContext
from mta.jmap.push import TYPES, Hub, account_states
from mta.jmap.registry import Principal

PROTOCOL = "jmap"
CAPABILITY = "urn:ietf:params:jmap:websocket"


async def serve(
    request: web.Request,
    ctx: JmapContext,
    hub: Hub,
    principal: Principal,
    limiter: RateLimiter,
) -> web.WebSocketResponse:
    socket = web.WebSocketResponse(protocols=(PROTOCOL,), max_msg_size=ctx.limits.max_size_request)
    await socket.prepare(request)
    if socket.ws_protocol != PROTOCOL:
        await socket.close(code=1002, message=b"the jmap subprotocol is required")
        return socket
    pusher: asyncio.Task[None] | None = None
    metrics.PUSH_CONNECTIONS.labels("websocket").inc()
    try:
        async for message in socket:
            if message.type != WSMsgType.TEXT:
                continue
            reply = await _frame(message.data, ctx, principal, limiter)
            if reply.get("@type") == "WebSocketPushEnable":
                if pusher is not None:
                    pusher.cancel()
                types = reply.get("dataTypes")
                wanted = None if types is None else {t for t in types if t in TYPES}
                pusher = asyncio.create_task(_push(socket, ctx, hub, principal, wanted))
                continue
            if reply.get("@type") == "WebSocketPushDisable":
                if pusher is not None:
                    pusher.cancel()
                    pusher = None
                continue
            await socket.send_str(json.dumps(reply, default=str))
    finally:
        metrics.PUSH_CONNECTIONS.labels("websocket").dec()
        if pusher is not None:
            pusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pusher
    return socket


async def _frame(
    raw: str, ctx: JmapContext, principal: Principal, limiter: RateLimiter
) -> dict[str, Any]:
    request_id: Any = None
    try:
        if len(raw.encode()) > ctx.limits.max_size_request:
            raise api.RequestError("limit", "the request is too large", limit="maxSizeRequest")
        try:
            data = json.loads(raw)
        except ValueError:
            raise api.RequestError("notJSON", "the frame is not JSON") from None
        if not isinstance(data, dict):
            raise api.RequestError("notRequest", "a frame is a JSON object")
        request_id = data.get("id")
        kind = data.get("@type")
        if kind in ("WebSocketPushEnable", "WebSocketPushDisable"):
            types = data.get("dataTypes")
            if types is not None and not (
                isinstance(types, list) and all(isinstance(t, str) for t in types)
            ):
                raise api.RequestError("notRequest", "dataTypes must be null or type names")
            return data
        if kind != "Request":
            raise api.RequestError("notRequest", "@type must be Request")
        decision = await limiter.hit(
            f"jmap:principal:{principal.key}", ctx.limits.requests_per_minute, 60
        )
        if not decision.allowed:
            raise api.RequestError("limit", "too many requests", status=429, limit="rateLimit")
        parsed = api.parse_request(json.dumps(data).encode(), ctx)
        result = await api.run_request(parsed, ctx, principal, session.session_state(principal))
        out: dict[str, Any] = {"@type": "Response", **result}
        if request_id is not None:
            out["requestId"] = request_id
        return out
    except api.RequestError as exc:
        problem: dict[str, Any] = {
            "@type": "RequestError",
            "type": api.ERROR_PREFIX + exc.kind,
            "status": exc.status,
            "detail": exc.detail,
            **exc.extra,
        }
        if request_id is not None:
            problem["requestId"] = request_id
        return problem


async def _push(
    socket: web.WebSocketResponse,
    ctx: JmapContext,
    hub: Hub,
    principal: Principal,
    wanted: set[str] | None,
) -> None:
    address_ids = {a.address_id: a.id for a in principal.accounts}
    queue = hub.subscribe(address_ids)
    try:
        async with ctx.runtime.db.connection() as conn:
            last = {a: await account_states(conn, a) for a in address_ids}
        hub.started(address_ids)
        try:
            while not socket.closed:
                pending = {await queue.get()}
                while not queue.empty():
                    pending.add(queue.get_nowait())
                changed: dict[str, dict[str, str]] = {}
                async with ctx.runtime.db.connection() as conn:
                    for address_id in pending:
                        now = await account_states(conn, address_id)
                        moved = {
                            t: s
                            for t, s in now.items()
                            if s != last[address_id].get(t) and (wanted is None or t in wanted)
                        }
                        last[address_id] = now
                        if moved:
                            changed[address_ids[address_id]] = moved
                if changed:
                    await socket.send_str(json.dumps({"@type": "StateChange", "changed": changed}))
        finally:
            hub.started(address_ids, -1)
    finally:
        hub.unsubscribe(address_ids, queue)
