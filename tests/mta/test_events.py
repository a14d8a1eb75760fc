"""The event log: written with its change, woken on commit, fanned out once."""

from __future__ import annotations

import asyncio

import pytest

from common.runtime import Runtime
from mta import mailstore
from tests.mta import factories


async def test_an_event_exists_only_if_its_transaction_commits(runtime: Runtime) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    account_id = owner["account_id"]
    now = runtime.clock.now()
    heard: list[str] = []
    async with runtime.db.connection() as listener:
        async with listener.cursor() as cur:
            await cur.execute(f"LISTEN {mailstore.EVENTS_CHANNEL}")

        with pytest.raises(RuntimeError):
            async with runtime.db.transaction() as conn:
                await mailstore.record_event(conn, account_id, "domain.created", {"id": "x"}, now)
                raise RuntimeError("the change it reports failed")
        async with runtime.db.transaction() as conn:
            kept = await mailstore.record_event(
                conn, account_id, "email.sent", {"email_id": "e"}, now
            )
        while len(heard) < 1:
            heard.append((await asyncio.wait_for(listener.notifies.get(), 5)).payload)
        assert heard == [kept.id]

    assert kept.payload["type"] == "email.sent"
    assert kept.payload["data"] == {"email_id": "e"}
    assert kept.payload["created_at"].endswith("Z")
    async with runtime.db.transaction() as conn:
        pending = await mailstore.undispatched_events(conn, 10)
        assert [e.id for e in pending] == [kept.id]
        await mailstore.mark_events_dispatched(conn, [kept.id], now)
    async with runtime.db.connection() as conn:
        assert await mailstore.undispatched_events(conn, 10) == []
        assert await mailstore.get_event(conn, account_id, kept.id) is not None
        other = await factories.mailbox_owner(runtime.db, "bob@other.test")
        assert await mailstore.get_event(conn, other["account_id"], kept.id) is None
