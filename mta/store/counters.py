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

import weakref
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from common.db import Conn, Prepared, execute
from mta.store import activity, events, mailboxes, quota, raw

_open: weakref.WeakKeyDictionary[Conn, Deferred] = weakref.WeakKeyDictionary()

# One statement for everything a delivery batch writes once: its raw messages,
# activity and event rows, then the mailbox counts and quota usage (each table's
# SQL is its own module's fragment). Empty arrays insert nothing.
_FLUSH = Prepared(
    f"""
    WITH blobs AS ({raw.PUT_MANY}),
         act AS ({activity.RECORD_MANY}),
         ev AS ({events.APPEND_MANY}),
         boxes AS ({mailboxes.ADD_COUNTS}),
         usage AS ({quota.ADD_MANY})
    {events.NOTIFY_IF_ANY}
    """
)


@dataclass
class Deferred:
    boxes: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    quota: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    # The batch's event log rows (events.Pending), inserted with one statement at flush.
    events: list[Any] = field(default_factory=list)
    # Its activity rows (activity.Event, time) and small raw messages (blob id ->
    # bytes, time), likewise: one statement each instead of one per message.
    activity: list[Any] = field(default_factory=list)
    blobs: dict[str, Any] = field(default_factory=dict)

    def email_added(self, address_id: str, mailbox_ids: list[str], size: int, seen: bool) -> None:
        for mailbox_id in mailbox_ids:
            counts = self.boxes[mailbox_id]
            counts[0] += 1
            counts[1] += 0 if seen else 1
        usage = self.quota[address_id]
        usage[0] += size
        usage[1] += 1

    async def flush(self, conn: Conn) -> None:
        if not (self.boxes or self.quota or self.events or self.activity or self.blobs):
            return
        boxes = sorted(self.boxes.items())
        quota = sorted(self.quota.items())
        await _FLUSH.execute(
            conn,
            {
                **raw.put_params(self.blobs),
                **activity.record_params(self.activity),
                **events.append_params(self.events),
                "boxes": [b for b, _ in boxes],
                "totals": [c[0] for _, c in boxes],
                "unread": [c[1] for _, c in boxes],
                "addresses": [a for a, _ in quota],
                "bytes": [u[0] for _, u in quota],
                "emails": [u[1] for _, u in quota],
            },
        )


@asynccontextmanager
async def deferred(conn: Conn) -> AsyncIterator[Deferred]:
    """Defer counting for the block, inside the transaction open on ``conn``.

    The deltas are written when the block ends normally, before the caller's
    COMMIT; when it raises they are dropped with the transaction's rows.
    """
    await execute(conn, "SET LOCAL mta.deferred_counts = 'on'")
    batch = _open[conn] = Deferred()
    try:
        yield batch
        await batch.flush(conn)
    finally:
        _open.pop(conn, None)


def deferred_for(conn: Conn) -> Deferred | None:
    return _open.get(conn)
