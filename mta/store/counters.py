"""Mailbox counts and quota usage of a delivery batch: queued with it, applied right after its COMMIT.

The delivery group commit (mta/commit.py) runs many deliveries in one
transaction. Counting each message as it is inserted would update the same
mailbox and quota rows over and over; writing a batch's counts once before
its COMMIT still held those rows' locks through the COMMIT's fsync, and two
daemon processes delivering to one mailbox took turns on them: each batch
waited for the other process's fsync before it could start its own, so the
two never shared one (issue 25's profile: as many samples waiting on that
lock as on the WAL flush itself).

Now the batch inserts its deltas as one ``mta.pending_counts`` row (insert
only: no lock another batch waits on) in the one statement of its flush,
with its raw messages, activity and event rows; the group commit then calls
:func:`apply_pending`, which moves every pending row into the counts, logs
the mailboxes' changes and enqueues the words job, in one statement whose
commit need not wait for an fsync (``synchronous_commit`` off for it alone):
if it is lost in a crash, the pending rows it deleted come back with it and
the next apply (any process, or the words job every minute) applies them.
So the counts follow the emails by one short statement, and the group
commit runs it before any of the batch's 250s is sent.

``async with deferred(conn)`` turns deferral on for the connection's open
transaction (the membership triggers then skip their counts, migration
0003/0103); ``emails.insert`` finds the :class:`Deferred` of its connection
and records its deltas there; the block writes them as it ends (a
transaction that rolls back loses its deltas with its rows). The outbound
worker's batches keep their recipients' outcomes and the messages to settle
there too (``outbound.write_deferred`` writes them first: settling adds
event rows to the flush).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from common.db import Conn, Database, Prepared, execute
from mta.store import activity, changes, events, mailboxes, outbound, quota, raw
from mta.store.batch import WORDS_JOB, Deferred, close_for, deferred_for, open_for

__all__ = ["Deferred", "apply_pending", "deferred", "deferred_for"]

log = logging.getLogger(__name__)

# One statement for everything a delivery batch writes once: its raw messages,
# activity and event rows (each table's SQL is its own module's fragment), and
# its counts as one pending row. Empty arrays insert nothing.
_FLUSH = Prepared(
    f"""
    WITH blobs AS ({raw.PUT_MANY}),
         act AS ({activity.RECORD_MANY}),
         ev AS ({events.APPEND_MANY}),
         counts AS (
            INSERT INTO mta.pending_counts
                (boxes, owners, totals, unread, addresses, bytes, emails, counted_at, words_at,
                 notify_events)
            SELECT %(boxes)s::text[]::uuid[], %(owners)s::text[]::uuid[], %(totals)s::int[],
                   %(unread)s::int[], %(addresses)s::text[]::uuid[], %(bytes)s::bigint[],
                   %(emails)s::int[], %(counted_at)s, %(words_at)s,
                   cardinality(%(ev_p)s::text[]) > 0
             WHERE %(counted_at)s::timestamptz IS NOT NULL
         )
    {events.NOTIFY_IF_ANY} AND %(counted_at)s::timestamptz IS NULL
    """
)

# Every pending row (none another apply holds) into the counts, with the
# batches' NOTIFYs: the event log's, and the change log's (its trigger, on the
# Mailbox changes). A NOTIFY takes a lock every other notifying transaction
# waits for until it has committed, so sent by the batch's own transaction it
# kept the two daemon processes' commits (and fsyncs) one after the other.
# The mailboxes are locked in id order (two applies never deadlock) and FOR NO
# KEY UPDATE, as an UPDATE of their counts would: FOR UPDATE would wait for
# every open batch's key-share locks on them (its memberships' foreign keys),
# through that batch's fsync. Then the quota rows in address order, one
# Mailbox change per mailbox, and the words job for the second of the last
# queued body (keyed like the recurring jobs' slots, common/jobs.py, so done
# ones are purged like them). Its commit is not waited for (see the module's
# docstring).
_APPLY = Prepared(
    f"""
    WITH p AS (
        DELETE FROM mta.pending_counts
         WHERE id IN (SELECT id FROM mta.pending_counts ORDER BY id FOR UPDATE SKIP LOCKED)
        RETURNING *
    ), b AS (
        SELECT d.id, d.owner, sum(d.total)::int AS total, sum(d.unread)::int AS unread,
               max(p.counted_at) AS at
          FROM p, unnest(p.boxes, p.owners, p.totals, p.unread) AS d (id, owner, total, unread)
         GROUP BY d.id, d.owner
    ), locked AS (
        SELECT m.id FROM mta.mailboxes m WHERE m.id IN (SELECT id FROM b) ORDER BY m.id
         FOR NO KEY UPDATE
    ), boxes AS (
        {mailboxes.ADD_COUNTS_FROM.format(source="(SELECT b.* FROM b JOIN locked USING (id))")}
        RETURNING m.id
    ), usage AS (
        {quota.ADD_FROM.format(source="(SELECT q.* FROM p, unnest(p.addresses, p.bytes, p.emails) AS q (a, b, n))")}
    ), change AS (
        {changes.INSERT}
        SELECT b.owner, 'Mailbox', b.id, 'updated', b.at FROM b JOIN boxes USING (id)
    ), words AS (
        SELECT max(words_at) AS at FROM p
    ), job AS (
        INSERT INTO common.jobs (kind, payload, run_at, key, max_attempts)
        SELECT %(job_kind)s::text, '{{}}'::jsonb, at,
               'every:' || %(job_kind)s::text || '@1s:' || floor(extract(epoch FROM at))::bigint, 3
          FROM words WHERE at IS NOT NULL
        ON CONFLICT (key) DO NOTHING
    )
    SELECT set_config('synchronous_commit', 'off', true), (SELECT count(*) FROM p) AS applied,
           (SELECT pg_notify('{events.CHANNEL}', '') FROM p WHERE notify_events LIMIT 1)
    """
)


async def _flush(conn: Conn, batch: Deferred) -> bool:
    """Write the batch's rows; whether it left counts to apply."""
    if not (batch.boxes or batch.quota or batch.events or batch.activity or batch.blobs):
        return False
    boxes = sorted(batch.boxes.items())
    usage = sorted(batch.quota.items())
    counted = batch.counted_at if boxes or usage else None
    await _FLUSH.execute(
        conn,
        {
            **raw.put_params(batch.blobs),
            **activity.record_params(batch.activity),
            **events.append_params(batch.events),
            "boxes": [b for b, _ in boxes],
            "owners": [batch.owners[b] for b, _ in boxes],
            "totals": [c[0] for _, c in boxes],
            "unread": [c[1] for _, c in boxes],
            "addresses": [a for a, _ in usage],
            "bytes": [u[0] for _, u in usage],
            "emails": [u[1] for _, u in usage],
            "counted_at": counted,
            "words_at": batch.words_at,
        },
    )
    return counted is not None


async def apply_pending(db: Database) -> int:
    """Apply every pending batch's counts (see the module's docstring); how many.

    Never raises: the counts stay pending for the next apply, and the mail
    they count is committed already.
    """
    try:
        async with db.connection() as conn:
            row = await _APPLY.fetch_one(conn, {"job_kind": WORDS_JOB})
    except Exception:
        log.exception("applying pending mailbox counts failed; the next apply retries")
        return 0
    return int(row["applied"]) if row else 0


@asynccontextmanager
async def deferred(conn: Conn) -> AsyncIterator[Deferred]:
    """Defer counting for the block, inside the transaction open on ``conn``.

    The batch's rows and pending counts are written when the block ends
    normally, before the caller's COMMIT (``Deferred.pending`` then says
    whether :func:`apply_pending` has work after it); when it raises they are
    dropped with the transaction's rows.
    """
    await execute(conn, "SET LOCAL mta.deferred_counts = 'on'")
    batch = open_for(conn)
    try:
        yield batch
        # The outbound worker's outcomes first: settling adds event rows.
        await outbound.write_deferred(conn, batch)
        batch.pending = await _flush(conn, batch)
    finally:
        close_for(conn)
