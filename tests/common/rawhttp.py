"""A raw HTTP/1.1 client over asyncio sockets, to send bodies as a real network does.

Test clients hand aiohttp the whole body at once; a real network delivers it
in segments, and a chunked body in chunks. ``send`` writes each part with its
own ``drain`` and a pause between them, so the server sees them arrive apart.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Long enough for the server to run its read on the first part alone.
PAUSE_SECONDS = 0.2


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def chunked(parts: Sequence[bytes]) -> list[bytes]:
    """The parts framed as HTTP/1.1 chunks, the last part followed by the end chunk."""
    framed = [b"%x\r\n%s\r\n" % (len(p), p) for p in parts]
    framed[-1] += b"0\r\n\r\n"
    return framed


async def send(
    port: int,
    method: str,
    target: str,
    parts: Sequence[bytes],
    *,
    headers: dict[str, str] | None = None,
    chunk: bool = False,
) -> Reply:
    """Send the request head, then each body part with a pause before it; read the reply."""
    head = {"Host": f"127.0.0.1:{port}", "Connection": "close", **(headers or {})}
    if chunk:
        head["Transfer-Encoding"] = "chunked"
        parts = chunked(parts)
    else:
        head.setdefault("Content-Length", str(sum(len(p) for p in parts)))
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        lines = [f"{method} {target} HTTP/1.1", *(f"{k}: {v}" for k, v in head.items())]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        for part in parts:
            await asyncio.sleep(PAUSE_SECONDS)
            writer.write(part)
            await writer.drain()
        return await _read_reply(reader)
    finally:
        writer.close()


async def _read_reply(reader: asyncio.StreamReader) -> Reply:
    raw_head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = raw_head.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    else:
        body = await reader.read()
    return Reply(int(status_line.split()[1]), headers, body)
