"""Blob ids the Email methods hand out, read back for the account that may see them.

A message's blobId is the SHA-256 of its raw MIME (mta/store/raw.py); a body
part's is "<that>.<partId>", its decoded content cut out of the message when
asked (Cyrus and Stalwart also derive part blobs from the message instead of
storing them twice). Anything else is an upload, read through the context's
upload reader. An account reads a message blob only when one of its emails
refers to it: the same bytes in another account's mailbox are not its own.
"""

from __future__ import annotations

import re

from common.blobs import BlobNotFound
from common.db import Conn
from mta.jmap.email import mime
from mta.jmap.email.context import EmailContext
from mta.store import emails

_SHA = re.compile(r"^[0-9a-f]{64}$")
_PART = re.compile(r"^([0-9a-f]{64})\.([0-9]{1,6})$")


async def owns_message_blob(conn: Conn, account_id: str, blob_id: str) -> bool:
    return await emails.owns_blob(conn, account_id, blob_id)


async def read_part(
    ctx: EmailContext, conn: Conn, account_id: str, blob_id: str
) -> tuple[bytes, str] | None:
    """(decoded content, media type) of a part blob id the account may read."""
    part = _PART.match(blob_id)
    if part is None:
        return None
    data = await _message(ctx, conn, account_id, part.group(1))
    if data is None:
        return None
    found = mime.find_part(mime.structure(mime.parse_raw(data)), part.group(2))
    return None if found is None else (found.content(), found.type)


async def read_blob(ctx: EmailContext, conn: Conn, account_id: str, blob_id: str) -> bytes | None:
    """The bytes of ``blob_id`` as ``account_id`` may read them, else None (notFound)."""
    if _PART.match(blob_id):
        found = await read_part(ctx, conn, account_id, blob_id)
        return None if found is None else found[0]
    if _SHA.match(blob_id):
        data = await _message(ctx, conn, account_id, blob_id)
        if data is not None:
            return data
    return await ctx.uploads(account_id, blob_id)


async def _message(ctx: EmailContext, conn: Conn, account_id: str, sha: str) -> bytes | None:
    if not await owns_message_blob(conn, account_id, sha):
        return None
    try:
        return await ctx.raw.get(sha)
    except (BlobNotFound, FileNotFoundError):
        return None
