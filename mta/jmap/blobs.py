"""Blobs (RFC 8620 6): upload and download, streamed; Blob/copy; who may read which blob.

Uploads stream into the blob store (``LocalBlobStore.put_stream``: a
temporary file, hashed as it is written, renamed to its SHA-256) and are
never held whole in memory; past maxSizeUpload the upload stops and nothing
is stored. A blob id is the SHA-256 of the bytes, shared with stored mail
(an uploaded message imported as an email is the same blob). An account
reads a blob it uploaded (``mta.uploads``) or the raw message of one of its
emails; Email adds its part blob ids through ``register_blob_resolver``.
Any other id, another account's included, is "not found".
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from aiohttp import web

from common.blobs import BLOB_ID, BlobNotFound
from common.db import Conn
from mta.jmap.context import JmapContext
from mta.jmap.registry import (
    CORE,
    Account,
    Blob,
    MethodCall,
    register,
    register_blob_resolver,
    resolve_blob,
    set_error,
)
from mta.store import emails, uploads

OCTET_STREAM = "application/octet-stream"
# type/subtype with an optional charset, as a download or an upload may name it.
MEDIA_TYPE = re.compile(
    r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/[a-z0-9][a-z0-9!#$&^_.+-]{0,127}"
    r"(; ?charset=\"?[a-z0-9_.:-]{1,40}\"?)?$",
    re.IGNORECASE,
)
CHUNK = 64 * 1024


class UploadTooLarge(Exception):
    pass


def media_type(value: str | None, default: str = OCTET_STREAM) -> str:
    value = (value or "").strip()
    return value if MEDIA_TYPE.match(value) else default


async def store_upload(
    ctx: JmapContext, account: Account, request: web.Request, *, max_size: int
) -> dict[str, Any]:
    """Stream the request body into the blob store; the upload response (RFC 8620 6.1)."""
    if request.content_length is not None and request.content_length > max_size:
        raise UploadTooLarge
    size = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal size
        async for chunk in request.content.iter_chunked(CHUNK):
            size += len(chunk)
            if size > max_size:
                raise UploadTooLarge
            yield chunk

    blob_id = await ctx.blobs.files.put_stream(body())
    kind = media_type(request.headers.get("Content-Type"))
    async with ctx.runtime.db.connection() as conn:
        await remember(conn, account.address_id, blob_id, kind, size, ctx.runtime.clock.now())
    return {"accountId": account.id, "blobId": blob_id, "type": kind, "size": size}


async def remember(
    conn: Conn, address_id: str, blob_id: str, kind: str, size: int, now: datetime
) -> None:
    """Let ``address_id`` use ``blob_id`` (an upload, or a Blob/copy into it)."""
    await uploads.remember(conn, address_id, blob_id, kind, size, now)


async def download(
    request: web.Request, ctx: JmapContext, account: Account, blob_id: str, name: str
) -> web.StreamResponse:
    blob = await resolve_blob(ctx, account, blob_id)
    if blob is None:
        raise web.HTTPNotFound(text="no such blob")
    kind = media_type(request.query.get("type"), blob.type)
    response = web.StreamResponse(
        headers={
            "Content-Type": kind,
            "Content-Length": str(blob.size),
            "Content-Disposition": content_disposition(name),
            # The bytes are whatever someone mailed: never run them in our origin.
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; sandbox",
            # A blob id names immutable bytes.
            "Cache-Control": "private, immutable, max-age=604800",
        }
    )
    await response.prepare(request)
    async for chunk in blob.chunks():
        await response.write(chunk)
    await response.write_eof()
    return response


def content_disposition(name: str) -> str:
    """attachment; with an ASCII fallback and the RFC 6266 / 8187 UTF-8 name."""
    name = name.replace("\r", "").replace("\n", "")[:255] or "blob"
    fallback = re.sub(r"[^A-Za-z0-9._ -]", "_", name)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"


async def prune_uploads(ctx: JmapContext) -> int:
    """Forget uploads older than JMAP_UPLOAD_KEEP_HOURS (their blobs become collectable)."""
    keep = timedelta(hours=ctx.limits.upload_keep_hours)
    async with ctx.runtime.db.connection() as conn:
        return await uploads.prune(conn, ctx.runtime.clock.now() - keep)


# -- who may read a blob --------------------------------------------------------


def _chunks(ctx: JmapContext, blob_id: str) -> Any:
    def open_() -> AsyncIterator[bytes]:
        return ctx.blobs.open(blob_id)

    return open_


@register_blob_resolver
async def uploaded_blob(ctx: JmapContext, account: Account, blob_id: str) -> Blob | None:
    if not BLOB_ID.match(blob_id):
        return None
    async with ctx.runtime.db.connection() as conn:
        upload = await uploads.find(conn, account.address_id, blob_id)
    if upload is None:
        return None
    return Blob(blob_id=blob_id, size=upload.size, type=upload.type, chunks=_chunks(ctx, blob_id))


@register_blob_resolver
async def message_blob(ctx: JmapContext, account: Account, blob_id: str) -> Blob | None:
    """The raw message of one of the account's emails (Email's ``blobId``)."""
    if not BLOB_ID.match(blob_id):
        return None
    async with ctx.runtime.db.connection() as conn:
        size = await emails.blob_size(conn, account.address_id, blob_id)
    if size is None:
        return None
    return Blob(blob_id=blob_id, size=size, type="message/rfc822", chunks=_chunks(ctx, blob_id))


async def read_blob(ctx: JmapContext, account: Account, blob_id: str) -> bytes | None:
    """The whole blob (for parsing a message to import); None when the account cannot see it."""
    blob = await resolve_blob(ctx, account, blob_id)
    if blob is None:
        return None
    try:
        return b"".join([chunk async for chunk in blob.chunks()])
    except BlobNotFound:
        return None


# -- Blob/copy (RFC 8620 6.3) ---------------------------------------------------


async def blob_copy(call: MethodCall) -> dict[str, Any]:
    source = call.account_for("fromAccountId")
    target = call.account
    ids = call.arguments.get("blobIds")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        call.fail("invalidArguments", "blobIds must be an array of ids")
    if len(ids) > call.limits.max_objects_in_set:
        call.fail("requestTooLarge", f"at most {call.limits.max_objects_in_set} blobs")
    copied: dict[str, str] = {}
    not_copied: dict[str, Any] = {}
    for blob_id in ids:
        blob = await resolve_blob(call.ctx, source, blob_id)
        if blob is None:
            not_copied[blob_id] = set_error("blobNotFound")
            continue
        stored = blob.blob_id
        if not BLOB_ID.match(stored):
            # A part of a message (Email's part ids): its bytes become a blob of their own.
            stored = await call.ctx.blobs.files.put_stream(blob.chunks())
        async with call.connection() as conn:
            await remember(conn, target.address_id, stored, blob.type, blob.size, call.now)
        copied[blob_id] = stored
    return {
        "fromAccountId": source.id,
        "accountId": target.id,
        "copied": copied or None,
        "notCopied": not_copied or None,
    }


register("Blob/copy", blob_copy, capability=CORE)
