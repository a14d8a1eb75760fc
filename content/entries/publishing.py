"""Scheduled publication: the job handler (content/entries/schedule.py enqueues it).

The handler re-checks the entry under a row lock: a job whose schedule was
changed, or whose entry was trashed or already published, does nothing.
Otherwise it publishes through the service's own edit path, as the system
actor, so a scheduled publication writes exactly what an editor's would.
"""

from __future__ import annotations

from datetime import datetime

from common import jobs
from common.jobs import Job
from content.auth.principal import SYSTEM_ACTOR
from content.context import Context
from content.entries import service, store
from content.entries.store import EntryChanges
from content.writes import write


def handler(ctx: Context) -> jobs.Handler:
    async def publish_due(job: Job) -> None:
        entry_id = job.payload["entryId"]
        at = datetime.fromisoformat(job.payload["at"])
        async with write(ctx) as tx:
            entry = await store.get_entry(tx.conn, entry_id, lock=True)
            if entry is None or entry.publish_at != at or entry.status == "published":
                return
            changes: EntryChanges = {"status": "published", "published_at": at, "publish_at": None}
            note = "scheduled publication"
            await service.save_changes(tx, entry, changes, SYSTEM_ACTOR, note, {"scheduledFor": at})

    return publish_due
