"""The words job (``mta.index_bodies``): body words of delivered mail into ``mta.email_words``.

Delivery queues the words' text of each message in ``mta.words_backlog``
(mta/store/emails.py) and its group commit enqueues this job for the second
it committed in (mta/store/counters.py); the gateway's job worker runs it
right after, and every minute anyway. Queued text becomes ``email_words`` in
one statement per batch. Mail stored before the body index existed
(migration 0020) is queued without text: its raw message is parsed here
with the same parser delivery uses, and its Bcc filled in too.
"""

from __future__ import annotations

from common.blobs import BlobNotFound
from common.db import Conn
from mta.message import parse_message, search_words
from mta.store import emails
from mta.store.raw import RawMessages

BATCH = 200


async def index_bodies(conn: Conn, raw: RawMessages, *, batch: int = BATCH) -> int:
    """Index up to ``batch`` queued bodies (then older unparsed ones); how many were done."""
    done = await emails.index_queued(conn, batch)
    if done == batch:
        return done
    rows = await emails.unindexed(conn, batch - done)
    for row in rows:
        try:
            data = bytes(row.data) if row.data is not None else await raw.get(row.blob_id)
            parsed = parse_message(data)
            words, bcc = search_words(parsed), parsed.bcc_addrs
        except (BlobNotFound, FileNotFoundError):
            words, bcc = "", []  # the raw message is gone: nothing to index, never again
        await emails.index_body(conn, row.id, words, bcc)
    return done + len(rows)
