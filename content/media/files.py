"""Serving stored bytes over HTTP: one Range, a strong ETag, immutable caching.

The file route's address is the SHA-256 of the bytes, so what it answers
never changes: the ETag is that hash (strong, byte-for-byte), and browsers
and CDNs may keep it a year without asking again. A single byte range is
answered 206 with Content-Range; a range past the end is 416 (in the CMS
error shape, with ``Content-Range: bytes */size``). Several ranges in one
header, a malformed header or an If-Range that no longer matches get the
whole file (RFC 9110 lets a server ignore Range; multipart/byteranges is
not served).
"""

from __future__ import annotations

import re

from aiohttp import web

from common.blobs import BlobNotFound, BlobStore
from content.errors import ContentError, NotFound
from content.media.store import Media

IMMUTABLE = "public, max-age=31536000, immutable"
_RANGE_RE = re.compile(r"^bytes=(\d*)-(\d*)$")
# Uploaded files are served from the CMS's own origin: never rendered as a
# page that could run script with the admin's cookies.
SAFE_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
}


def unsatisfiable(size: int) -> ContentError:
    return ContentError(
        416,
        "RANGE_NOT_SATISFIABLE",
        f"the range is outside the file's {size} bytes",
        {"size": size},
        headers={"Content-Range": f"bytes */{size}"},
    )


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """(first, last) inclusive for one satisfiable range; None: send everything."""
    if not header:
        return None
    match = _RANGE_RE.match(header.strip().replace(" ", ""))
    if match is None or match.group(0) == "bytes=-":
        return None  # several ranges or not one we read: the whole file
    first, last = match.group(1), match.group(2)
    if first == "":
        suffix = int(last)
        if suffix == 0 or size == 0:
            raise unsatisfiable(size)
        return max(0, size - suffix), size - 1
    start = int(first)
    if last != "" and int(last) < start:
        return None  # an invalid range-spec is ignored, not refused
    if start >= size:
        raise unsatisfiable(size)
    return start, size - 1 if last == "" else min(int(last), size - 1)


def _etag_matches(header: str, etag: str) -> bool:
    tags = [t.strip().removeprefix("W/") for t in header.split(",")]
    return "*" in tags or etag in tags


async def serve(request: web.Request, blobs: BlobStore, media: Media) -> web.StreamResponse:
    etag = f'"{media.sha256}"'
    headers = {
        "ETag": etag,
        "Cache-Control": IMMUTABLE,
        "Accept-Ranges": "bytes",
        **SAFE_HEADERS,
    }
    if_none_match = request.headers.get("If-None-Match")
    if if_none_match is not None and _etag_matches(if_none_match, etag):
        return web.Response(status=304, headers=headers)
    wanted = request.headers.get("Range")
    if_range = request.headers.get("If-Range")
    if if_range is not None and if_range.strip() != etag:
        wanted = None  # the client's partial copy is of other bytes
    span = byte_range(wanted, media.size)
    start, end = span if span is not None else (0, media.size - 1)
    response = web.StreamResponse(status=206 if span is not None else 200, headers=headers)
    response.content_type = media.type
    response.content_length = end - start + 1
    if span is not None:
        response.headers["Content-Range"] = f"bytes {start}-{end}/{media.size}"
    if request.method == "HEAD":
        await response.prepare(request)
        return response
    chunks = blobs.open(media.sha256, start, end)
    try:
        # The first read finds a missing object while a 404 can still be sent.
        first = await anext(chunks, b"")
    except BlobNotFound:
        raise NotFound("the bytes of this media are missing from storage") from None
    await response.prepare(request)
    await response.write(first)
    async for chunk in chunks:
        await response.write(chunk)
    await response.write_eof()
    return response
