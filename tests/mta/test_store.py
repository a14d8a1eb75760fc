"""The mailbox store: indexes that serve the hot queries, the change log, cascades."""

from __future__ import annotations

from datetime import timedelta

from common.db import Database
from common.runtime import Runtime
from mta.message import parse_message
from mta.store import changes, emails, mailboxes
from tests.mta import factories


async def _deliver(runtime: Runtime, address_id: str, subject: str, minutes: int = 0) -> str:
    now = runtime.clock.now() + timedelta(minutes=minutes)
    async with runtime.db.transaction() as conn:
        roles = await mailboxes.ensure_defaults(conn, address_id, now)
        return await emails.insert(
            conn,
            emails.NewEmail(
                address_id=address_id,
                blob_id="a" * 64,
                size=100,
                received_at=now,
                parsed=parse_message(
                    f"Subject: {subject}\r\nFrom: Zoë <z@x.test>\r\n\r\nx".encode()
                ),
                mailbox_ids=[roles["inbox"]],
            ),
            now,
        )


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
