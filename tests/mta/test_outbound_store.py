"""The outbound queue and suppressions as mail/ calls them (mta/mailstore.py)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import psycopg2
import pytest

from common.clock import ManualClock
from common.runtime import Runtime
from mta import mailstore
from mta.store import outbound
from tests.mta import factories

RAW = (
    b"From: Alice <alice@example.test>\r\nTo: bob@remote.test, carol@remote.test\r\n"
    b"Subject: Hello\r\n\r\nHi.\r\n"
)


async def _enqueue(runtime: Runtime, account_id: str, **kw: object) -> str:
    message_id = str(uuid.uuid4())
    params: dict[str, object] = {
        "message_id": message_id,
        "account_id": account_id,
        "source": "api",
        "mail_from": "alice@example.test",
        "recipients": ["bob@remote.test", "carol@remote.test"],
        "raw": RAW,
        "now": runtime.clock.now(),
    }
    params.update(kw)
    async with runtime.db.transaction() as conn:
        await mailstore.enqueue(conn, **params)  # type: ignore[arg-type]
    return message_id


async def test_enqueue_queues_each_recipient_and_wakes_the_worker_at_commit(
    runtime: Runtime,
) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    async with runtime.db.connection() as listener:
        async with listener.cursor() as cur:
            await cur.execute(f"LISTEN {mailstore.OUTBOUND_CHANNEL}")
        message_id = await _enqueue(
            runtime, owner["account_id"], event_data={"email_id": "x", "subject": "Hello"}
        )
        note = await asyncio.wait_for(listener.notifies.get(), 5)
        assert note.payload == message_id

    async with runtime.db.connection() as conn:
        status = await mailstore.outbound_status(conn, owner["account_id"], message_id)
        assert status is not None
        assert status.status == "queued"
        assert [(r.email, r.status, r.attempts) for r in status.recipients] == [
            ("bob@remote.test", "queued", 0),
            ("carol@remote.test", "queued", 0),
        ]
        # The sender is a hosted address: its activity will show the attempts.
        address = await conn_fetch_address(conn, message_id)
        assert address == owner["address_id"]
        other = await factories.account(runtime.db)
        assert await mailstore.outbound_status(conn, other, message_id) is None
        assert await mailstore.outbound_statuses(conn, owner["account_id"], [message_id]) == {
            message_id: "queued"
        }
        assert await mailstore.outbound_statuses(conn, other, [message_id]) == {}


async def conn_fetch_address(conn: object, message_id: str) -> str | None:
    from common.db import fetch_val

    value = await fetch_val(
        conn,  # type: ignore[arg-type]
        "SELECT address_id::text FROM mta.outbound_messages WHERE id = %s",
        (message_id,),
    )
    return value  # type: ignore[no-any-return]


async def test_a_rolled_back_enqueue_leaves_nothing(runtime: Runtime) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    message_id = str(uuid.uuid4())
    with pytest.raises(RuntimeError):
        async with runtime.db.transaction() as conn:
            await mailstore.enqueue(
                conn,
                message_id=message_id,
                account_id=owner["account_id"],
                source="api",
                mail_from="alice@example.test",
                recipients=["bob@remote.test"],
                raw=RAW,
                now=runtime.clock.now(),
            )
            raise RuntimeError("the API row failed")
    async with runtime.db.connection() as conn:
        assert await mailstore.outbound_status(conn, owner["account_id"], message_id) is None


async def test_scheduled_mail_can_be_rescheduled_and_canceled_only_while_scheduled(
    runtime: Runtime, clock: ManualClock
) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    account_id = owner["account_id"]
    later = clock.now() + timedelta(hours=2)
    data = {"email_id": "e", "subject": "Hello"}
    message_id = await _enqueue(runtime, account_id, scheduled_at=later, event_data=data)
    async with runtime.db.transaction() as conn:
        status = await mailstore.outbound_status(conn, account_id, message_id)
        assert status is not None and status.status == "scheduled"
        assert status.scheduled_at == later
        assert status.recipients[0].next_attempt_at == later
        # Not due yet: the worker claims nothing.
        assert await outbound.claim(conn, clock.now(), timedelta(minutes=5), 10) == []

        even_later = later + timedelta(hours=1)
        assert await mailstore.reschedule(conn, account_id, message_id, even_later, clock.now())
        status = await mailstore.outbound_status(conn, account_id, message_id)
        assert status is not None and status.scheduled_at == even_later
        assert status.recipients[0].next_attempt_at == even_later
        other = await factories.account(runtime.db)
        assert not await mailstore.cancel_scheduled(conn, other, message_id, clock.now())

        clock.advance(seconds=1)  # events of one instant have no order
        assert await mailstore.cancel_scheduled(conn, account_id, message_id, clock.now())
        assert not await mailstore.cancel_scheduled(conn, account_id, message_id, clock.now())
        assert not await mailstore.reschedule(conn, account_id, message_id, later, clock.now())
        status = await mailstore.outbound_status(conn, account_id, message_id)
        assert status is not None and status.status == "canceled"
        assert {r.status for r in status.recipients} == {"canceled"}
        types = [e.type for e in await mailstore.email_events(conn, account_id, message_id)]
        assert types == ["email.scheduled", "email.canceled"]
        clock.advance(hours=10)
        assert await outbound.claim(conn, clock.now(), timedelta(minutes=5), 10) == []


async def test_suppressions_are_per_account_and_skip_recipients(runtime: Runtime) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    account_id = owner["account_id"]
    now = runtime.clock.now()
    async with runtime.db.transaction() as conn:
        added = await mailstore.add_suppression(conn, account_id, "Bob@Remote.test", "manual", now)
        assert added.email == "bob@remote.test" and added.reason == "manual"
        assert added.email_id is None
    with pytest.raises(psycopg2.errors.UniqueViolation):
        async with runtime.db.transaction() as conn:
            await mailstore.add_suppression(conn, account_id, "bob@remote.test", "bounce", now)

    message_id = await _enqueue(runtime, account_id, event_data={"email_id": "e"})
    async with runtime.db.connection() as conn:
        status = await mailstore.outbound_status(conn, account_id, message_id)
        assert status is not None
        assert [(r.email, r.status) for r in status.recipients] == [
            ("bob@remote.test", "suppressed"),
            ("carol@remote.test", "queued"),
        ]
        assert await mailstore.suppressed(
            conn, account_id, ["BOB@remote.test", "carol@remote.test"]
        ) == {"bob@remote.test"}
        other = await factories.account(runtime.db)
        assert await mailstore.suppressed(conn, other, ["bob@remote.test"]) == set()

        page, total = await mailstore.suppression_page(
            conn,
            account_id,
            limit=10,
            offset=0,
            order_by=mailstore.SUPPRESSION_SORTS["email"],
            search="REMOTE",
        )
        assert total == 1 and page[0].id == added.id
        page, total = await mailstore.suppression_page(
            conn, account_id, limit=10, offset=0, order_by="created_at", search="nobody"
        )
        assert (page, total) == ([], 0)
        assert not await mailstore.delete_suppression(conn, other, added.id)
        assert await mailstore.delete_suppression(conn, account_id, added.id)
        assert await mailstore.suppressed(conn, account_id, ["bob@remote.test"]) == set()


async def test_every_recipient_suppressed_reports_the_message_suppressed_at_once(
    runtime: Runtime,
) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    account_id = owner["account_id"]
    now = runtime.clock.now()
    async with runtime.db.transaction() as conn:
        await mailstore.add_suppression(conn, account_id, "bob@remote.test", "bounce", now)
    message_id = await _enqueue(
        runtime, account_id, recipients=["bob@remote.test"], event_data={"email_id": "e"}
    )
    async with runtime.db.connection() as conn:
        status = await mailstore.outbound_status(conn, account_id, message_id)
        assert status is not None and status.status == "suppressed"
        events = await mailstore.email_events(conn, account_id, message_id)
        assert [e.type for e in events] == ["email.suppressed"]
        assert events[0].payload["data"]["suppressed"]["recipient"] == "bob@remote.test"


async def test_a_claim_holds_a_recipient_for_its_lease_only(
    runtime: Runtime, clock: ManualClock
) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    message_id = await _enqueue(runtime, owner["account_id"], recipients=["bob@remote.test"])
    lease = timedelta(minutes=5)
    async with runtime.db.transaction() as conn:
        claimed = await outbound.claim(conn, clock.now(), lease, 10)
        assert [(c.message_id, c.rcpt) for c in claimed] == [(message_id, "bob@remote.test")]
    async with runtime.db.transaction() as conn:
        # Held: a second worker finds nothing.
        assert await outbound.claim(conn, clock.now(), lease, 10) == []
    clock.advance(seconds=lease.total_seconds() + 1)
    async with runtime.db.transaction() as conn:
        # The first worker died: the recipient is due again.
        again = await outbound.claim(conn, clock.now(), lease, 10)
        assert [c.message_id for c in again] == [message_id]


async def test_sealed_raw_is_unreadable_at_rest(runtime: Runtime) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    sealer = mailstore.outbound_sealer("s" * 40)
    message_id = await _enqueue(runtime, owner["account_id"], source="system", sealer=sealer)
    async with runtime.db.connection() as conn:
        row = await runtime.db.fetch_one(
            "SELECT raw, raw_sealed FROM mta.outbound_messages WHERE id = %s", (message_id,)
        )
        assert row is not None and row["raw"] is None and b"Hello" not in row["raw_sealed"].encode()
        assert await outbound.raw_of(conn, message_id, sealer) == RAW


async def test_a_batchs_outcomes_and_statuses_are_reached_by_their_keys(runtime: Runtime) -> None:
    """The group commit's statements (write_deferred) under the generic plan pooled
    connections settle on: each row by its primary key, whatever the batch's size."""
    from common.db import execute
    from mta.store import counters
    from tests.plans import generic_plan

    account_id = await factories.account(runtime.db)
    message_id = await _enqueue(runtime, account_id, recipients=["bob@remote.test"])
    now = runtime.clock.now()
    async with runtime.db.transaction() as conn:
        await execute(conn, "SET LOCAL plan_cache_mode = force_generic_plan")
        async with counters.deferred(conn):
            outcome = outbound.Outcome(message_id, 1, "delivered", "250 ok", "mx.remote.test")
            await outbound.record_outcomes(conn, [outcome], now)
            await outbound.settle_later(conn, message_id, now)
            # Nothing written yet: the batch writes it as it ends.
            assert (await outbound.recipients_of(conn, message_id))[0]["status"] == "queued"
        plans = [
            await generic_plan(conn, fragment)
            for fragment in ("attempts = r.attempts", "ORDER BY m.id FOR UPDATE", "x(id, status")
        ]
    for plan in plans:
        assert "Seq Scan on outbound" not in plan, plan
    assert "outbound_recipients_pkey" in plans[0], plans[0]
    assert "outbound_messages_pkey" in plans[1], plans[1]
    assert "outbound_messages_pkey" in plans[2], plans[2]
    async with runtime.db.connection() as conn:
        found = await outbound.status(conn, account_id, message_id)
        events = await mailstore.email_events(conn, account_id, message_id)
    assert found is not None and found.status == "delivered"
    assert [(r.status, r.attempts, r.destination) for r in found.recipients] == [
        ("delivered", 1, "mx.remote.test")
    ]
    assert [e.type for e in events] == ["email.delivered"]
