"""The media library: streamed uploads, their records, edits, listing and deletion.

An upload is a multipart body read part by part (aiohttp's reader, never the
whole body): the file part streams into the blob store while it is counted,
and the first byte past MAX_UPLOAD_BYTES stops it with a 413, so at most one
network chunk past the limit is ever read. The type is sniffed from the
first bytes (``filetype``), never taken from the client's name or
Content-Type; an image's width and height come from Pillow reading the
header kept from the stream's first MiB.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import AsyncIterator, Iterable
from typing import Any
from urllib.parse import unquote

import filetype  # type: ignore[import-untyped]
from aiohttp import BodyPartReader, MultipartReader
from PIL import Image

from common.blobs import BLOB_ID, OCTET_STREAM, BlobStore, LocalBlobStore
from common.db import Conn
from common.ids import short_id
from common.s3blobs import S3BlobStore
from common.web import text_problem
from content.auth.principal import Principal
from content.context import Context
from content.entries.serializers import LAYOUT_KEY
from content.errors import BadRequest, Conflict, ContentError, NotFound, Problems, invalid
from content.media import store
from content.media.store import Media, MediaFilters, MediaText, NewMedia
from content.settings import ContentSettings
from content.types.fields import References, clean_object
from content.writes import write

# Where the service serves files of the local driver (below the mount prefix).
FILES_PATH = "/media/files"
# Longest value of each editable text.
TEXT_LIMITS = {"alt": 1000, "caption": 5000, "folder": 200}
# Room for the multipart framing and the text parts: a Content-Length beyond
# MAX_UPLOAD_BYTES plus this is refused before a byte of the body is read.
FORM_OVERHEAD = 64 * 1024
# filetype reads signatures from the first 8 KiB.
SNIFF_BYTES = 8192
# Pillow finds an image's size in its header; every common format has it here.
HEAD_BYTES = 1024 * 1024
MAX_FILENAME = 255
# aiohttp's part reader holds one read back to look for the boundary, so the
# count (and the limit) lags by one read: at most this many bytes.
READ_BYTES = 64 * 1024


def make_blob_store(settings: ContentSettings) -> BlobStore:
    """The store STORAGE_DRIVER names (docs/content.md, "Media")."""
    if settings.storage_driver == "s3":
        return S3BlobStore(
            bucket=settings.s3_bucket,
            endpoint=settings.s3_endpoint,
            region=settings.s3_region,
            access_key=settings.s3_access_key,
            secret_key=settings.s3_secret_key,
            public_url=settings.s3_public_url,
        )
    return LocalBlobStore(settings.storage_local_dir)


def file_url(ctx: Context, sha256: str) -> str:
    """The driver's public address, or the service's own file route under PUBLIC_URL."""
    public = ctx.blobs.public_url(sha256)
    if public is not None:
        return public
    return f"{ctx.runtime.settings.public_url.rstrip('/')}{ctx.prefix}{FILES_PATH}/{sha256}"


def too_large(limit: int) -> ContentError:
    return ContentError(
        413,
        "PAYLOAD_TOO_LARGE",
        f"the file is larger than the upload limit of {limit} bytes (MAX_UPLOAD_BYTES)",
        {"maxBytes": limit},
    )


# --- upload ------------------------------------------------------------------


async def upload(
    ctx: Context, actor: Principal, reader: MultipartReader, declared_length: int | None
) -> Media:
    """Store the ``file`` part and record it with the optional alt, caption and folder."""
    limit = ctx.config.max_upload_bytes
    if declared_length is not None and declared_length > limit + FORM_OVERHEAD:
        raise too_large(limit)
    stored: NewMedia | None = None
    text: MediaText = {}
    try:
        while (part := await _next_part(reader)) is not None:
            if not isinstance(part, BodyPartReader):
                raise BadRequest("a nested multipart body is not a media property")
            name = part.name or ""
            if name == "file" and stored is None:
                stored = await _store_file(ctx, part, limit)
            elif name == "file":
                raise invalid("file", "send one file per upload")
            elif name in TEXT_LIMITS:
                text[name] = await _read_text(part, name)  # type: ignore[literal-required]
            else:
                # Refused at once: discarding an unknown part would read it whole.
                raise invalid(name or "(unnamed part)", "is not a media property")
        if stored is None:
            raise invalid("file", "is required: send the file as a multipart part named file")
        async with write(ctx) as tx:
            row = await store.insert_media(tx.conn, stored, text, actor.user.id, tx.now)
            summary = {"filename": row.filename, "type": row.type, "size": row.size}
            await tx.record(
                actor.actor(), "media.created", "media", row.id, summary, notify={"id": row.id}
            )
        return row
    except BaseException:
        if stored is not None:
            await _forget_blob(ctx, stored.sha256)
        raise


def _malformed(exc: Exception) -> ContentError:
    return BadRequest(f"the multipart body is malformed or cut short ({exc})", "BAD_MULTIPART")


async def _next_part(reader: MultipartReader) -> BodyPartReader | MultipartReader | None:
    # aiohttp says "malformed" with ValueError (a missing boundary, a body that
    # ends mid-part); that is the client's error, never a 500.
    try:
        return await reader.next()
    except (ValueError, AssertionError) as exc:
        raise _malformed(exc) from None


async def _read_chunk(part: BodyPartReader, size: int) -> bytes:
    try:
        return await part.read_chunk(size)
    except (ValueError, AssertionError) as exc:
        raise _malformed(exc) from None


async def _store_file(ctx: Context, part: BodyPartReader, limit: int) -> NewMedia:
    received = 0

    async def counted() -> AsyncIterator[bytes]:
        nonlocal received
        while chunk := await _read_chunk(part, READ_BYTES):
            received += len(chunk)
            if received > limit:
                raise too_large(limit)
            yield chunk

    stream = counted()
    # The type travels with the object (S3's Content-Type), so it is sniffed
    # from the first bytes before anything is stored.
    first = bytearray()
    async for chunk in stream:
        first += chunk
        if len(first) >= SNIFF_BYTES:
            break
    kind = filetype.guess(bytes(first[:SNIFF_BYTES])) if first else None
    mime = kind.mime if kind is not None else OCTET_STREAM
    head = bytearray(first[:HEAD_BYTES])

    async def everything() -> AsyncIterator[bytes]:
        yield bytes(first)
        async for chunk in stream:
            if len(head) < HEAD_BYTES:
                head.extend(chunk[: HEAD_BYTES - len(head)])
            yield chunk

    sha256 = await ctx.blobs.put_stream(everything(), content_type=mime)
    new = NewMedia(
        id=short_id(),
        filename=_filename(part.filename),
        type=mime,
        size=received,
        sha256=sha256,
        width=None,
        height=None,
        url=file_url(ctx, sha256),
    )
    if received == 0:
        await _forget_blob(ctx, sha256)
        raise invalid("file", "is empty")
    if mime.startswith("image/"):
        width, height = _dimensions(bytes(head))
        return dataclasses.replace(new, width=width, height=height)
    return new


def _dimensions(head: bytes) -> tuple[int | None, int | None]:
    """Width and height from the image header; None when Pillow cannot read it."""
    try:
        with Image.open(io.BytesIO(head)) as image:
            width, height = image.size
            return int(width), int(height)
    except Exception:  # any undecodable header: the file is kept, its size unknown
        return None, None


def _filename(raw: str | None) -> str:
    """The client's name without a path or control characters (a label, nothing more).

    Percent-escapes are undone: browsers send " and line breaks as %22, %0D, %0A
    (HTML's form encoding) and aiohttp's client escapes more.
    """
    name = unquote(raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(c for c in name if c.isprintable()).strip()
    if text_problem(name) is not None:
        name = ""
    return name[:MAX_FILENAME] or "file"


async def _read_text(part: BodyPartReader, name: str) -> str:
    limit = TEXT_LIMITS[name]
    raw = bytearray()
    while chunk := await _read_chunk(part, 4096):
        raw += chunk
        if len(raw) > limit * 4:  # UTF-8 takes at most 4 bytes a character
            raise invalid(name, f"must be at most {limit} characters")
    try:
        value = raw.decode(part.get_charset("utf-8"))
    except (UnicodeDecodeError, LookupError):
        raise invalid(name, "must be UTF-8 text") from None
    return _clean_text(name, value)


def _clean_text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise invalid(name, "must be a string")
    value = value.strip()
    if name == "folder":
        # Folders are slash-separated names: "blog/2026", never "/blog/2026/".
        value = "/".join(p.strip() for p in value.split("/") if p.strip())
    problem = text_problem(value)
    if problem is not None:
        raise invalid(name, problem)
    if len(value) > TEXT_LIMITS[name]:
        raise invalid(name, f"must be at most {TEXT_LIMITS[name]} characters")
    return value


async def _forget_blob(ctx: Context, sha256: str) -> None:
    """Delete stored bytes no row holds (a refused upload, a deleted last copy)."""
    async with ctx.db.connection() as conn:
        if await store.sha256_in_use(conn, sha256):
            return
    await ctx.blobs.delete(sha256)


# --- the record ----------------------------------------------------------------


async def get_media(ctx: Context, media_id: str) -> Media:
    async with ctx.db.connection() as conn:
        row = await store.get_media(conn, media_id)
    if row is None:
        raise NotFound("no such media")
    return row


async def file_of(ctx: Context, sha256: str) -> Media:
    """The record of these bytes: the file route serves only what the library holds."""
    if not BLOB_ID.match(sha256):
        raise NotFound("no such file")
    async with ctx.db.connection() as conn:
        row = await store.file_of(conn, sha256)
    if row is None:
        raise NotFound("no such file")
    return row


async def list_media(
    ctx: Context, filters: MediaFilters, offset: int, limit: int
) -> tuple[list[Media], int]:
    async with ctx.db.connection() as conn:
        return await store.list_media(conn, filters, offset, limit)


async def update_media(
    ctx: Context, actor: Principal, media_id: str, body: dict[str, Any]
) -> Media:
    """Alt text, caption and folder; the bytes of a media never change."""
    p = Problems()
    for key in sorted(set(body) - set(TEXT_LIMITS)):
        p.add(key, "is not an editable media property (alt, caption, folder)")
    text: MediaText = {}
    for name in TEXT_LIMITS:
        if name in body:
            try:
                text[name] = _clean_text(name, body[name])  # type: ignore[literal-required]
            except ContentError as exc:
                p.add(name, str(exc).removeprefix(f"{name}: "))
    p.raise_if_any()
    async with write(ctx) as tx:
        row = await store.update_media(tx.conn, media_id, text, tx.now)
        if row is None:
            raise NotFound("no such media")
        await tx.record(
            actor.actor(),
            "media.updated",
            "media",
            media_id,
            {"fields": sorted(text)},
            notify={"id": media_id},
        )
    return row


async def delete_media(ctx: Context, actor: Principal, media_id: str) -> Media:
    """Delete a media nothing points at; entries still using it make this a 409."""
    async with write(ctx) as tx:
        row = await store.get_media(tx.conn, media_id, lock=True)
        if row is None:
            raise NotFound("no such media")
        users = await referrers(tx.conn, media_id)
        if users:
            raise Conflict(
                f"{len(users)} entries still use this media; remove it from them first",
                "MEDIA_IN_USE",
                {"referrers": users},
            )
        await store.delete_media(tx.conn, media_id)
        summary = {"filename": row.filename, "type": row.type}
        await tx.record(
            actor.actor(), "media.deleted", "media", media_id, summary, notify={"id": media_id}
        )
    # Committed: the bytes go once no other row holds the same ones.
    await _forget_blob(ctx, row.sha256)
    return row


async def referrers(conn: Conn, media_id: str) -> list[dict[str, Any]]:
    """Entries (trashed ones too: they can be restored) whose media or gallery fields hold it."""
    found = []
    for row in await store.entries_mentioning(conn, media_id):
        refs = References()
        data = {k: v for k, v in row["data"].items() if k != LAYOUT_KEY}
        clean_object(row["fields"], data, "", Problems(), refs)
        keys = [path for path, held in refs.media if held == media_id]
        if keys:
            found.append(
                {
                    "id": row["id"],
                    "type": row["type_name"],
                    "title": row["title"],
                    "trashed": row["deleted_at"] is not None,
                    "keys": keys,
                }
            )
    return found


async def resolve_media_urls(conn: Conn, ids: Iterable[str]) -> dict[str, str]:
    """Media id -> public URL for the ids that exist (site settings, delivery).

    One query; an unknown or deleted id is simply absent from the answer.
    """
    rows = await store.media_by_ids(conn, sorted(set(ids)))
    return {media_id: row.url for media_id, row in rows.items()}
