"""Server-sent events: how the assistant streams to the admin (and the field assistant).

``text/event-stream``, one ``event: <name>`` and one ``data: <JSON>`` line per
event. Chosen over the realtime socket because a turn is one request's
answer: it needs no ticket, proxies pass it, and the browser's fetch reads it.
Refusals known before the first byte (no provider, budget spent, a key) are
ordinary JSON errors; a failure after it is an ``error`` event in the same
{error, code, details} shape.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

MEDIA = "text/event-stream"


async def send(
    request: web.Request, events: AsyncIterator[tuple[str, dict[str, Any]]]
) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={
            "Content-Type": f"{MEDIA}; charset=utf-8",
            "Cache-Control": "no-store",
            # nginx and its kin would otherwise hold the stream back.
            "X-Accel-Buffering": "no",
        }
    )
    await response.prepare(request)
    async for name, data in events:
        line = json.dumps(data, default=str, ensure_ascii=False)
        await response.write(f"event: {name}\ndata: {line}\n\n".encode())
    await response.write_eof()
    return response
