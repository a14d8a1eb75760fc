"""Words of the body for mail stored before the body index existed (migration 0020).

Delivery writes ``body_search`` (and ``bcc_addrs``) with each new email; older
rows have NULL there. The hourly-then-done ``mta.index_bodies`` job
(mta/service.py) reads those messages newest first, a batch at a time, and
fills both from the same parser delivery uses, so text search finds old mail
as soon as the job has passed.
"""

from __future__ import annotations

from common.blobs import BlobNotFound
from common.db import Conn
from mta.message import parse_message
from mta.store import emails
from mta.store.raw import RawMessages

BATCH = 200


async def index_bodies(conn: Conn, raw: RawMessages, *, batch: int = BATCH) -> int:
    """Fill ``body_search`` for up to ``batch`` emails that lack it; how many were done."""
    rows = await emails.unindexed(conn, batch)
    for row in rows:
        try:
            data = bytes(row.data) if row.data is not None else await raw.get(row.blob_id)
            parsed = parse_message(data)
            words = " ".join(
                [parsed.body_text, *(f"{a['name']} {a['email']}" for a in parsed.bcc_addrs)]
            )
            bcc = parsed.bcc_addrs
        except (BlobNotFound, FileNotFoundError):
            words, bcc = "", []  # the raw message is gone: nothing to index, never again
        await emails.index_body(conn, row.id, words, bcc)
    return len(rows)
