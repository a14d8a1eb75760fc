"""The process's notification hub (common/notify.py): one LISTEN connection,
subscribers by channel, one reconnect policy, tested across a real restart
of PostgreSQL."""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psycopg2
import pytest

from common.db import fetch_val
from common.embedded_pg import EmbeddedPostgres
from common.notify import NotificationHub
from common.runtime import Runtime
from tests.conftest import ROOT


def _notify(dsn: str, channel: str, payload: str, *, commit: bool = True) -> None:
    conn = psycopg2.connect(dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_notify(%s, %s)", (channel, payload))
        if commit:
            conn.commit()
        else:
            conn.rollback()
    finally:
        conn.close()


async def _heard(queue: asyncio.Queue[str]) -> str:
    return await asyncio.wait_for(queue.get(), 10)


@pytest.fixture
async def hub(database_url: str) -> AsyncIterator[NotificationHub]:
    hub = NotificationHub(database_url)
    yield hub


async def test_subscribers_hear_their_channel_only_and_only_once_committed(
    hub: NotificationHub, database_url: str
) -> None:
    changes: asyncio.Queue[str] = asyncio.Queue()
    events: asyncio.Queue[str] = asyncio.Queue()
    hub.subscribe("test_changes", changes.put_nowait)
    hub.subscribe("test_events", events.put_nowait)
    async with hub.running():
        await asyncio.to_thread(_notify, database_url, "test_changes", "rolled back", commit=False)
        await asyncio.to_thread(_notify, database_url, "test_changes", "a")
        await asyncio.to_thread(_notify, database_url, "test_events", "b")
        assert await _heard(changes) == "a"
        assert await _heard(events) == "b"
        assert changes.empty()


async def test_a_channel_subscribed_while_running_is_listened_at_once(
    hub: NotificationHub, database_url: str
) -> None:
    async with hub.running():
        late: asyncio.Queue[str] = asyncio.Queue()
        hub.subscribe("test_late", late.put_nowait)
        # The LISTEN runs on the hub's connection; a notification sent after
        # it is in place is heard. Poll by resending until the first arrives.
        for _ in range(50):
            await asyncio.to_thread(_notify, database_url, "test_late", "x")
            try:
                assert await asyncio.wait_for(late.get(), 0.2) == "x"
                break
            except TimeoutError:
                continue
        else:
            pytest.fail("a channel subscribed while running was never heard")


async def test_a_failing_subscriber_does_not_stop_the_others(
    hub: NotificationHub, database_url: str
) -> None:
    def broken(payload: str) -> None:
        raise RuntimeError("subscriber bug")

    heard: asyncio.Queue[str] = asyncio.Queue()
    hub.subscribe("test_changes", broken)
    hub.subscribe("test_changes", heard.put_nowait)
    async with hub.running():
        await asyncio.to_thread(_notify, database_url, "test_changes", "1")
        await asyncio.to_thread(_notify, database_url, "test_changes", "2")
        assert [await _heard(heard), await _heard(heard)] == ["1", "2"]


async def test_closed_subscription_hears_nothing_more(
    hub: NotificationHub, database_url: str
) -> None:
    closed: list[str] = []
    kept: asyncio.Queue[str] = asyncio.Queue()
    subscription = hub.subscribe("test_changes", closed.append)
    hub.subscribe("test_changes", kept.put_nowait)
    async with hub.running():
        subscription.close()
        await asyncio.to_thread(_notify, database_url, "test_changes", "after")
        assert await _heard(kept) == "after"
    assert closed == []


async def test_users_share_one_connection_and_the_last_stops_it(
    hub: NotificationHub,
) -> None:
    async with hub.running():
        async with hub.running():
            assert hub.ready.is_set()
        # The outer user still holds it.
        assert hub.ready.is_set()
    assert not hub.ready.is_set()
    assert hub.connects == 1


async def test_exactly_one_hub_holds_an_advisory_lock(database_url: str) -> None:
    first, second = NotificationHub(database_url), NotificationHub(database_url)
    await first.hold_lock(0x7465_7374)  # not connected yet: tried on connect
    async with first.running(), second.running():
        assert first.holds(0x7465_7374)
        # Asked while connected: tried at once, and refused while the first holds it.
        assert not await second.hold_lock(0x7465_7374)
    async with second.running():
        # The first let go with its connection.
        assert second.holds(0x7465_7374)


@pytest.fixture
def own_postgres() -> Iterator[EmbeddedPostgres]:
    """A PostgreSQL of this test's own, so it can be restarted under the hub."""
    home = Path(tempfile.mkdtemp(prefix="svc-notify-pg-"))
    pg = EmbeddedPostgres(home / "pgdata")
    pg.start()
    try:
        yield pg
    finally:
        pg.stop()
        shutil.rmtree(home, ignore_errors=True)


async def test_a_database_restart_is_survived_with_a_gap_and_the_lock_retaken(
    own_postgres: EmbeddedPostgres,
) -> None:
    dsn = own_postgres.dsn()
    hub = NotificationHub(dsn)
    heard: asyncio.Queue[str] = asyncio.Queue()
    gaps: list[int] = []
    hub.subscribe("test_changes", heard.put_nowait, on_gap=lambda: gaps.append(hub.connects))
    await hub.hold_lock(42)
    async with hub.running():
        assert gaps == [1]  # the first connect counts as a gap: re-read at start
        assert hub.holds(42)
        await asyncio.to_thread(_notify, dsn, "test_changes", "before")
        assert await _heard(heard) == "before"

        await asyncio.to_thread(own_postgres.stop)
        for _ in range(100):
            if not hub.ready.is_set():
                break
            await asyncio.sleep(0.05)
        assert not hub.ready.is_set()
        assert not hub.holds(42)
        await asyncio.to_thread(own_postgres.start)

        await asyncio.wait_for(hub.ready.wait(), 30)
        assert hub.connects == 2
        assert gaps == [1, 2]  # subscribers were told they may have missed something
        assert hub.holds(42)
        await asyncio.to_thread(_notify, dsn, "test_changes", "after")
        assert await _heard(heard) == "after"


def test_no_module_but_the_hub_opens_a_listen_loop() -> None:
    """One LISTEN connection per process: nothing else executes LISTEN."""
    offenders = []
    for package in ("common", "gateway", "oauth", "content", "mail", "mta"):
        for path in (ROOT / package).rglob("*.py"):
            if path == ROOT / "common" / "notify.py":
                continue
            text = path.read_text()
            if re.search(r"""execute\(\s*f?["']LISTEN\b""", text) or ".notifies.get(" in text:
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


async def test_the_gateway_services_share_the_process_hub(
    runtime: Runtime, gateway_client: Any
) -> None:
    """Content and JMAP (and mail's webmail, webhooks and the outbound worker
    where they run) ride the one connection of the process."""
    hub = runtime.notifications
    assert hub.ready.is_set()
    assert hub.connects == 1
    assert {"content_changes", "mta_changes"} <= set(hub._subs)
    async with runtime.db.connection() as conn:
        listening = await fetch_val(
            conn,
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND (query LIKE 'LISTEN %%' OR query LIKE 'SELECT pg_try_advisory_lock%%')",
        )
    assert listening == 1
