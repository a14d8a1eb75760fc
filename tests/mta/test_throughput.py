"""What the throughput work (issue 25) changed that a user could notice if it broke.

A delivery group commit writes its messages' raw MIME, activity and event
rows once per batch (mta/store/counters.py): every message keeps all three.
"""

from __future__ import annotations

import asyncio

from mta.context import MtaContext
from mta.store import activity
from tests.mta.jmap_email import make_box


def raw(n: int) -> bytes:
    return (
        f"From: Bob <bob@sender.test>\r\nTo: alice@example.test\r\nSubject: batch {n}\r\n"
        f"Message-ID: <batch-{n}@sender.test>\r\nDate: Thu, 01 Jan 2026 10:00:00 +0000\r\n\r\n"
        f"body {n}\r\n"
    ).encode()


async def test_messages_sharing_a_group_commit_each_keep_raw_activity_and_event(
    mta_ctx: MtaContext,
) -> None:
    box = await make_box(mta_ctx)
    # Delivered together: the first commits alone, the rest queue behind it and
    # share the next transaction and its one flush.
    ids = await asyncio.gather(*(box.deliver(raw(n)) for n in range(8)))
    assert len(set(ids)) == 8
    async with box.db.connection() as conn:
        logged, total = await activity.page(conn, box.account_id, limit=50, offset=0)
    assert total == 8
    assert sorted(a.subject for a in logged) == sorted(f"batch {n}" for n in range(8))
    assert {str(a.email_id) for a in logged} == set(ids)
    rows = await box.db.fetch_all(
        "SELECT id::text, blob_id FROM mta.emails WHERE id = ANY(%s::uuid[])", (list(ids),)
    )
    assert len(rows) == 8
    for row in rows:
        stored = await box.ctx.blobs.get(row["blob_id"])
        n = ids.index(row["id"])
        assert stored.endswith(f"body {n}\r\n".encode()) and b"Received: " in stored
    received = await box.db.fetch_all(
        "SELECT email_id::text FROM mta.events WHERE type = 'email.received'"
        " AND email_id = ANY(%s::uuid[])",
        (list(ids),),
    )
    assert sorted(r["email_id"] for r in received) == sorted(ids)
