"""The publication job's place on the queue, kept in step with ``publish_at``.

Scheduling enqueues a job in the same transaction that stores ``publish_at``,
keyed by entry and time, so it exists exactly when the schedule does, runs
once however many workers poll (SKIP LOCKED claims), and survives restarts.
What the job does is content/entries/publishing.py.
"""

from __future__ import annotations

from datetime import datetime

from common import jobs
from common.db import Conn

PUBLISH_JOB = "content.publish_entry"


def job_key(entry_id: str, at: datetime) -> str:
    return f"{PUBLISH_JOB}:{entry_id}:{at.isoformat()}"


async def schedule(conn: Conn, entry_id: str, at: datetime) -> None:
    await jobs.enqueue(
        conn,
        PUBLISH_JOB,
        {"entryId": entry_id, "at": at.isoformat()},
        run_at=at,
        key=job_key(entry_id, at),
    )


async def reschedule(
    conn: Conn, entry_id: str, before: datetime | None, after: datetime | None
) -> None:
    if before is not None:
        await jobs.cancel(conn, job_key(entry_id, before))
    if after is not None:
        await schedule(conn, entry_id, after)
