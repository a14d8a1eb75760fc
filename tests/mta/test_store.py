"""The mailbox store: indexes that serve the hot queries, the change log, cascades."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

from common.db import Database
from common.runtime import Runtime
from mta.message import parse_message
from mta.store import changes, emails, mailboxes
from tests.mta import factories


def new_email(
    address_id: str, mailbox_id: str, subject: str, now: datetime, *, size: int = 100, **more: Any
) -> emails.NewEmail:
    return emails.NewEmail(
        address_id=address_id,
        blob_id="a" * 64,
        size=size,
        received_at=now,
        parsed=parse_message(f"Subject: {subject}\r\nFrom: Zoë <z@x.test>\r\n\r\nx".encode()),
        mailbox_ids=[mailbox_id],
        **more,
    )


async def _deliver(runtime: Runtime, address_id: str, subject: str, minutes: int = 0) -> str:
    now = runtime.clock.now() + timedelta(minutes=minutes)
    async with runtime.db.transaction() as conn:
        roles = await mailboxes.ensure_defaults(conn, address_id, now)
        return await emails.insert(conn, new_email(address_id, roles["inbox"], subject, now), now)


async def test_folder_listing_and_header_search_use_their_indexes(runtime: Runtime) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    for i in range(5):
        await _deliver(runtime, owner["address_id"], f"report number {i}", minutes=i)
    async with runtime.db.connection() as conn:
        inbox = (await mailboxes.by_role(conn, owner["address_id"], "inbox")) or {}
        listed = await emails.in_mailbox(conn, str(inbox["id"]), limit=2)
        assert [r["subject"] for r in listed] == ["report number 4", "report number 3"]
        found = await emails.search(conn, owner["address_id"], "zoë report")
        assert len(found) == 5
        # With the alternatives priced out, the plans show the indexes that keep these
        # queries fast at 100,000 messages per mailbox.
        async with conn.cursor() as cur:
            for knob in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
                await cur.execute(f"SET {knob} = off")
            await cur.execute(
                "EXPLAIN SELECT email_id FROM mta.email_mailboxes WHERE mailbox_id = %s"
                " ORDER BY received_at DESC, email_id DESC LIMIT 50",
                (str(inbox["id"]),),
            )
            plan = " ".join(r[0] for r in await cur.fetchall())
            assert "email_mailboxes_listing" in plan and "Sort" not in plan
            # GIN is read through bitmap scans.
            await cur.execute("SET enable_bitmapscan = on")
            await cur.execute("SET enable_indexscan = off")
            await cur.execute(
                "EXPLAIN SELECT id FROM mta.emails"
                " WHERE search @@ plainto_tsquery('simple', 'report')"
            )
            assert "emails_search" in " ".join(r[0] for r in await cur.fetchall())


async def test_change_log_gives_a_moving_state(runtime: Runtime) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    async with runtime.db.connection() as conn:
        assert await changes.state(conn, owner["address_id"], "Email") == "0"
    first = await _deliver(runtime, owner["address_id"], "one")
    async with runtime.db.connection() as conn:
        state_1 = await changes.state(conn, owner["address_id"], "Email")
    await _deliver(runtime, owner["address_id"], "two")
    async with runtime.db.connection() as conn:
        state_2 = await changes.state(conn, owner["address_id"], "Email")
        mailbox_state = await changes.state(conn, owner["address_id"], "Mailbox")
    assert int(state_2) > int(state_1) > 0 and int(mailbox_state) > 0
    rows = await runtime.db.fetch_all(
        "SELECT object_id::text, change FROM mta.changes"
        " WHERE address_id = %s AND type_name = 'Email' AND id <= %s",
        (owner["address_id"], int(state_1)),
    )
    assert rows == [{"object_id": first, "change": "created"}]


async def test_deleting_an_address_deletes_its_mail(db: Database, runtime: Runtime) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    other = await factories.mailbox_owner(db, "bob@other.test")
    await _deliver(runtime, owner["address_id"], "gone")
    await _deliver(runtime, other["address_id"], "stays")
    await db.execute("DELETE FROM mail.addresses WHERE id = %s", (owner["address_id"],))
    for table in ("emails", "mailboxes", "threads", "changes", "quota_usage"):
        remaining = await db.fetch_val(
            f"SELECT count(*) FROM mta.{table} WHERE address_id = %s", (owner["address_id"],)
        )
        assert remaining == 0, table
    assert await db.fetch_val("SELECT count(*) FROM mta.emails") == 1


async def test_a_delivery_batch_counts_its_mail_once_before_commit(runtime: Runtime) -> None:
    """Counts written per batch (mta/store/counters.py) equal the rows, failed work included."""
    from mta.commit import GroupCommit
    from mta.store import counters, quota

    now = runtime.clock.now()
    first = (await factories.mailbox_owner(runtime.db, "one@count.test"))["address_id"]
    second = (await factories.mailbox_owner(runtime.db, "two@count2.test"))["address_id"]
    async with runtime.db.connection() as conn:
        boxes = {a: await mailboxes.ensure_defaults(conn, a, now) for a in (first, second)}
    committer = GroupCommit(runtime.db)

    def work(address_id: str, box: str, n: int, *, seen: bool = False, fail: bool = False):
        async def run(conn):
            assert counters.deferred_for(conn) is not None  # inside the batch
            await emails.insert(
                conn,
                new_email(
                    address_id,
                    boxes[address_id][box],
                    f"n{n}",
                    now,
                    size=1000 + n,
                    keywords=["$seen"] if seen else [],
                ),
                now,
            )
            if fail:
                raise RuntimeError("this one fails after its insert")

        return run

    jobs = [
        work(first, "inbox", 1),
        work(first, "inbox", 2, seen=True),
        work(second, "inbox", 3),
        work(first, "archive", 4),
        work(second, "inbox", 5, fail=True),  # batch fails; retried alone, still fails
        work(second, "junk", 6, seen=True),
    ]
    results = await asyncio.gather(*(committer.run(j) for j in jobs), return_exceptions=True)
    assert [isinstance(r, RuntimeError) for r in results] == [False] * 4 + [True, False]
    rows = await runtime.db.fetch_all(
        "SELECT m.id::text AS id, m.total_emails, m.unread_emails,"
        " (SELECT count(*) FROM mta.email_mailboxes em WHERE em.mailbox_id = m.id) AS really,"
        " (SELECT count(*) FROM mta.email_mailboxes em WHERE em.mailbox_id = m.id"
        "   AND NOT em.seen) AS really_unread"
        " FROM mta.mailboxes m WHERE m.address_id IN (%s, %s)",
        (first, second),
    )
    assert all(r["total_emails"] == r["really"] for r in rows), rows
    assert all(r["unread_emails"] == r["really_unread"] for r in rows), rows
    by_id = {r["id"]: r for r in rows}
    assert by_id[boxes[first]["inbox"]]["total_emails"] == 2
    assert by_id[boxes[first]["inbox"]]["unread_emails"] == 1
    assert by_id[boxes[second]["junk"]]["unread_emails"] == 0
    async with runtime.db.connection() as conn:
        assert await quota.usage(conn, first) == (1001 + 1002 + 1004, 3)
        assert await quota.usage(conn, second) == (1003 + 1006, 2)
        # Outside a batch the trigger counts again.
        await emails.insert(
            conn, new_email(first, boxes[first]["inbox"], "alone", now, size=10), now
        )
    assert (
        await runtime.db.fetch_val(
            "SELECT total_emails FROM mta.mailboxes WHERE id = %s", (boxes[first]["inbox"],)
        )
        == 3
    )


async def test_counts_a_batch_left_pending_are_applied_by_the_next_apply(runtime: Runtime) -> None:
    """A daemon killed between a batch's commit and its counts' apply loses no count."""
    from mta.store import counters, quota

    now = runtime.clock.now()
    address_id = (await factories.mailbox_owner(runtime.db, "left@pending.test"))["address_id"]
    async with runtime.db.connection() as conn:
        inbox = (await mailboxes.ensure_defaults(conn, address_id, now))["inbox"]
        state = await changes.state(conn, address_id, "Mailbox")
    # The group commit's transaction, without the apply that follows it.
    async with runtime.db.transaction() as conn, counters.deferred(conn) as batch:
        for n in range(3):
            await emails.insert(conn, new_email(address_id, inbox, f"p{n}", now, size=100), now)
    assert batch.pending
    counts = "SELECT total_emails, unread_emails FROM mta.mailboxes WHERE id = %s"
    assert await runtime.db.fetch_one(counts, (inbox,)) == {"total_emails": 0, "unread_emails": 0}
    async with runtime.db.connection() as conn:
        assert await changes.state(conn, address_id, "Mailbox") == state
    assert await counters.apply_pending(runtime.db) == 1
    assert await runtime.db.fetch_one(counts, (inbox,)) == {"total_emails": 3, "unread_emails": 3}
    async with runtime.db.connection() as conn:
        assert await quota.usage(conn, address_id) == (300, 3)
        # One Mailbox change for the batch, logged when its counts moved.
        assert await changes.state(conn, address_id, "Mailbox") != state
    assert await counters.apply_pending(runtime.db) == 0
    # The body words of the batch: queued, and the words job enqueued for its second.
    assert await runtime.db.fetch_val("SELECT count(*) FROM mta.words_backlog") == 3
    assert (
        await runtime.db.fetch_val(
            "SELECT count(*) FROM common.jobs WHERE kind = 'mta.index_bodies'"
        )
        == 1
    )
