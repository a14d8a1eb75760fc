"""Mailbox counts and quota usage written once per transaction instead of once per message.

The delivery group commit (mta/commit.py) runs many deliveries in one
transaction. Counting each message as it is inserted updates the same
mailbox and quota rows over and over, and holds their row locks from the
first message of the batch to its COMMIT: a second daemon process delivering
to the same mailbox waits that long. Deferred, the batch adds up its deltas
and writes them in one statement right before COMMIT, in a fixed order (no
deadlock between processes).

``async with deferred(conn)`` turns deferral on for the connection's open
transaction (the membership trigger then skips its count, migration 0003);
``emails.insert`` finds the :class:`Deferred` of its connection and records
its deltas there; the block writes them as it ends (a transaction that rolls
back loses its deltas with its rows).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from common import jobs
from common.db import Conn, Prepared, execute
from mta.store import activity, events, mailboxes, quota, raw
from mta.store.batch import WORDS_JOB, Deferred, close_for, deferred_for, open_for

__all__ = ["Deferred", "deferred", "deferred_for"]

# One statement for everything a delivery batch writes once: its raw messages,
# activity and event rows, then the mailbox counts and quota usage (each table's
# SQL is its own module's fragment), and the words job when bodies wait for it
# (one job per second at most: its key is the second's). Empty arrays insert
# nothing.
_FLUSH = Prepared(
    f"""
    WITH blobs AS ({raw.PUT_MANY}),
         act AS ({activity.RECORD_MANY}),
         ev AS ({events.APPEND_MANY}),
         boxes AS ({mailboxes.ADD_COUNTS}),
         usage AS ({quota.ADD_MANY}),
         job AS ({jobs.ENQUEUE_CTE})
    {events.NOTIFY_IF_ANY}
    """
)


async def _flush(conn: Conn, batch: Deferred) -> None:
    if not (batch.boxes or batch.quota or batch.events or batch.activity or batch.blobs):
        return
    words_at = batch.words_at
    boxes = sorted(batch.boxes.items())
    quota = sorted(batch.quota.items())
    await _FLUSH.execute(
        conn,
        {
            **raw.put_params(batch.blobs),
            **activity.record_params(batch.activity),
            **events.append_params(batch.events),
            "boxes": [b for b, _ in boxes],
            "totals": [c[0] for _, c in boxes],
            "unread": [c[1] for _, c in boxes],
            "addresses": [a for a, _ in quota],
            "bytes": [u[0] for _, u in quota],
            "emails": [u[1] for _, u in quota],
            "job_kind": WORDS_JOB,
            "job_key": jobs.slot_key(WORDS_JOB, words_at) if words_at else None,
            "job_at": words_at,
        },
    )


@asynccontextmanager
async def deferred(conn: Conn) -> AsyncIterator[Deferred]:
    """Defer counting for the block, inside the transaction open on ``conn``.

    The deltas are written when the block ends normally, before the caller's
    COMMIT; when it raises they are dropped with the transaction's rows.
    """
    await execute(conn, "SET LOCAL mta.deferred_counts = 'on'")
    batch = open_for(conn)
    try:
        yield batch
        await _flush(conn, batch)
    finally:
        close_for(conn)
