"""Scheduled publication on the job queue.

Scheduling enqueues a job in the same transaction that stores ``publish_at``,
keyed by entry and time, so it exists exactly when the schedule does, runs
once however many workers poll (SKIP LOCKED claims), and survives restarts.
The handler re-checks the entry under a row lock: a job whose schedule was
changed, or whose entry was trashed or already published, does nothing.
"""

from __future__ import annotations

from datetime import datetime

from common import jobs
from common.db import Conn
from common.jobs import Job
from content.activity.store import record
from content.auth.principal import SYSTEM_ACTOR
from content.changes import notify
from content.context import Context
from content.entries import store

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


def handler(ctx: Context) -> jobs.Handler:
    async def publish_due(job: Job) -> None:
        entry_id = job.payload["entryId"]
        at = datetime.fromisoformat(job.payload["at"])
        now = ctx.clock.now()
        async with ctx.db.transaction() as conn:
            entry = await store.get_entry(conn, entry_id, lock=True)
            if entry is None or entry["publish_at"] != at or entry["status"] == "published":
                return
            await store.update_entry(
                conn, entry_id, {"status": "published", "published_at": at, "publish_at": None}, now
            )
            published = await store.get_entry(conn, entry_id)
            assert published is not None
            await store.insert_revision(conn, published, SYSTEM_ACTOR, "scheduled publication", now)
            await record(
                conn,
                at=now,
                actor=SYSTEM_ACTOR,
                action="entry.published",
                subject_kind="entry",
                subject_id=entry_id,
                summary={
                    "title": published["title"],
                    "type": published["type_name"],
                    "scheduledFor": at,
                },
            )
            event = {
                "event": "entry.published",
                "id": entry_id,
                "slug": published["slug"],
                "type": published["type_name"],
            }
            await notify(conn, ctx.changes.origin, **event)
        ctx.changes.committed(event)

    return publish_due
