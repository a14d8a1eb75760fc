"""Words of the body for mail stored before the body index existed (migration 0020).

Delivery writes ``body_search`` (and ``bcc_addrs``) with each new email; older
rows have NULL there. The hourly-then-done ``mta.index_bodies`` job
(mta/service.py) reads those messages newest first, a batch at a time, and
fills both from the same parser delivery uses, so text search finds old mail
as soon as the job has passed.
"""

from __future__ import annotations

from common.blobs import BlobNotFound
from common.db import Conn, Json, execute, fetch_all
from mta.message import parse_message
from mta.store.raw import RawMessages

BATCH = 200


async def index_bodies(conn: Conn, raw: RawMessages, *, batch: int = BATCH) -> int:
    """Fill ``body_search`` for up to ``batch`` emails that lack it; how many were done."""
    rows = await fetch_all(
        conn,
        """
        SELECT e.id::text, e.blob_id,
               (SELECT ib.data FROM mta.inline_blobs ib WHERE ib.blob_id = e.blob_id) AS data
          FROM mta.emails e WHERE e.body_search IS NULL
         ORDER BY e.received_at DESC LIMIT %s
        """,
        (batch,),
    )
    for row in rows:
        try:
            data = bytes(row["data"]) if row["data"] is not None else await raw.get(row["blob_id"])
            parsed = parse_message(data)
            words = " ".join(
                [parsed.body_text, *(f"{a['name']} {a['email']}" for a in parsed.bcc_addrs)]
            )
            bcc = parsed.bcc_addrs
        except (BlobNotFound, FileNotFoundError):
            words, bcc = "", []  # the raw message is gone: nothing to index, never again
        await execute(
            conn,
            "UPDATE mta.emails SET body_search = to_tsvector('simple', %s), bcc_addrs = %s"
            " WHERE id = %s",
            (words, Json(bcc), row["id"]),
        )
    return len(rows)
