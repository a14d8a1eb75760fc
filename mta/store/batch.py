"""What a delivery group commit keeps until its flush: counts, raw messages, activity, events,
the outbound worker's outcomes and whether body words wait for the words job.

A leaf of mta/store: the modules that write those rows (``raw``, ``activity``,
``events``, ``emails``) look up the open batch of their connection here and
append to it; ``counters`` (which imports them for their SQL) opens the batch
and writes it in one statement before COMMIT.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from common.db import Conn

# The job that turns queued body words into ``mta.email_words`` (mta/service.py
# registers its handler, mta/jmap/email/backlog.py does the work).
WORDS_JOB = "mta.index_bodies"

_open: weakref.WeakKeyDictionary[Conn, Deferred] = weakref.WeakKeyDictionary()


@dataclass
class Deferred:
    boxes: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    quota: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    # The batch's event log rows (events.Pending), inserted with one statement at flush.
    events: list[Any] = field(default_factory=list)
    # Its activity rows (activity.Event, time) and small raw messages (blob id ->
    # bytes, time), likewise: all in the one statement of the flush (counters.py).
    activity: list[Any] = field(default_factory=list)
    blobs: dict[str, Any] = field(default_factory=dict)
    # When the last of its emails queued its body words (emails.insert): the
    # flush then enqueues WORDS_JOB to index them right after the commit.
    words_at: datetime | None = None
    # The address of each mailbox counted (its Mailbox change is logged when the
    # counts are applied), and the time of the last email counted.
    owners: dict[str, str] = field(default_factory=dict)
    counted_at: datetime | None = None
    # The outbound worker's recipient outcomes (outbound.Outcome, time) and the
    # messages to settle (id -> (time, extra event data)): written by
    # outbound.write_deferred with one statement each, before the flush.
    outcomes: list[Any] = field(default_factory=list)
    settles: dict[str, Any] = field(default_factory=dict)
    # Set by the flush: its counts wait in mta.pending_counts for apply_pending.
    pending: bool = False

    def email_added(
        self, address_id: str, mailbox_ids: list[str], size: int, seen: bool, now: datetime
    ) -> None:
        self.counted_at = now
        for mailbox_id in mailbox_ids:
            self.owners[mailbox_id] = address_id
            counts = self.boxes[mailbox_id]
            counts[0] += 1
            counts[1] += 0 if seen else 1
        usage = self.quota[address_id]
        usage[0] += size
        usage[1] += 1


def open_for(conn: Conn) -> Deferred:
    batch = _open[conn] = Deferred()
    return batch


def close_for(conn: Conn) -> None:
    _open.pop(conn, None)


def deferred_for(conn: Conn) -> Deferred | None:
    """The open batch of ``conn``'s transaction, if a group commit runs it."""
    return _open.get(conn)
