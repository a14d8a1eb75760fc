"""One write of the CMS: its transaction, its activity record, its change notification.

Every change the activity log shows is made inside ``write(ctx)``. The block's
own SQL, the activity row (:meth:`Write.record`) and, for what delivery serves
(entries and types), the ``pg_notify`` on ``content_changes`` commit together
or not at all, and so do the deliveries of any webhook that takes the event
(content/webhooks/events.py); once the transaction has committed, this process's content
version moves for each notification (other processes move theirs when Postgres
delivers it, see content/changes.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from common.db import Conn, Database
from content.activity import store as activity_store
from content.auth.principal import Actor
from content.changes import Changes
from content.changes import notify as queue_notification
from content.context import Context
from content.webhooks.events import enqueue_deliveries


@dataclass
class Write:
    """The open transaction of one write; ``now`` is the time it records."""

    conn: Conn
    now: datetime
    changes: Changes | None = None
    events: list[dict[str, Any]] = field(default_factory=list)

    async def record(
        self,
        actor: Actor,
        action: str,
        subject_kind: str,
        subject_id: str,
        summary: dict[str, Any] | None = None,
        *,
        notify: dict[str, Any] | None = None,
    ) -> None:
        """The activity row; with ``notify``, also the change event named ``action``."""
        await activity_store.record(
            self.conn,
            at=self.now,
            actor=actor,
            action=action,
            subject_kind=subject_kind,
            subject_id=subject_id,
            summary=summary,
        )
        if notify is not None:
            if self.changes is None:
                raise RuntimeError("this write has no change feed to notify")
            event = {"event": action, **notify}
            await queue_notification(self.conn, self.changes.origin, **event)
            await enqueue_deliveries(self.conn, event, self.now)
            self.events.append(event)


@asynccontextmanager
async def write_on(
    db: Database, now: datetime, changes: Changes | None = None
) -> AsyncIterator[Write]:
    """A write on ``db`` outside a request (``make password`` has no Context)."""
    async with db.transaction() as conn:
        tx = Write(conn, now, changes)
        yield tx
    # Committed: only now may this process count the changes as made.
    if changes is not None:
        for event in tx.events:
            changes.committed(event)


def write(ctx: Context, *, now: datetime | None = None) -> AbstractAsyncContextManager[Write]:
    """A write of a request or job; ``now`` defaults to the clock at its start."""
    return write_on(ctx.db, ctx.clock.now() if now is None else now, ctx.changes)
