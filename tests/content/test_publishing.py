"""Scheduled publication on the job queue, the content version and change notifications."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from common.jobs import JobQueue
from common.runtime import Runtime
from content import ContentService
from content.service import CONTENT_VERSION
from tests.content.factories import make_type


@pytest.fixture
async def draft(cms, team, runtime, clock):
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    resp = await cms.post(
        "/api/entries", json={"type": "post", "title": "Soon"}, headers=team["editor"].headers
    )
    return await resp.json()


def _iso(moment):
    return moment.isoformat()


async def test_scheduled_publication_happens_on_time(cms, team, clock, runtime, draft):
    url = f"/api/entries/{draft['id']}"
    editor = team["editor"].headers
    past = await cms.patch(
        url, json={"publishAt": _iso(clock.now() - timedelta(seconds=1))}, headers=editor
    )
    assert past.status == 400 and (await past.json())["details"]["fields"][0]["key"] == "publishAt"
    naive = await cms.patch(url, json={"publishAt": "2031-01-01T00:00:00"}, headers=editor)
    assert naive.status == 400
    author_try = await cms.patch(
        url,
        json={"publishAt": _iso(clock.now() + timedelta(hours=1))},
        headers=team["author"].headers,
    )
    assert author_try.status == 403
    at = clock.now() + timedelta(hours=1)
    resp = await cms.patch(url, json={"publishAt": _iso(at)}, headers=editor)
    assert resp.status == 200
    body = await resp.json()
    assert body["status"] == "draft" and body["publishAt"].startswith(at.isoformat()[:19])
    version = cms.app[CONTENT_VERSION]()
    clock.advance(minutes=59)
    await runtime.jobs.run_due()
    assert (await (await cms.get(url, headers=editor)).json())["status"] == "draft"
    clock.advance(minutes=1)
    await runtime.jobs.run_due()
    live = await (await cms.get(url, headers=editor)).json()
    assert live["status"] == "published" and live["publishAt"] is None
    assert cms.app[CONTENT_VERSION]() > version
    revs = await (await cms.get(f"{url}/revisions", headers=editor)).json()
    assert revs["data"][0]["note"] == "scheduled publication"
    assert revs["data"][0]["actor"]["kind"] == "system"
    activity = await (
        await cms.get(f"/api/activity?subjectId={draft['id']}", headers=editor)
    ).json()
    assert [a["action"] for a in activity["data"][:2]] == ["entry.published", "entry.scheduled"]


async def test_rescheduling_and_cancelling(cms, team, clock, runtime, draft):
    url = f"/api/entries/{draft['id']}"
    editor = team["editor"].headers
    await cms.patch(url, json={"publishAt": _iso(clock.now() + timedelta(hours=1))}, headers=editor)
    await cms.patch(url, json={"publishAt": _iso(clock.now() + timedelta(hours=3))}, headers=editor)
    clock.advance(hours=2)
    await runtime.jobs.run_due()
    assert (await (await cms.get(url, headers=editor)).json())["status"] == "draft"
    await cms.patch(url, json={"publishAt": None}, headers=editor)
    clock.advance(hours=2)
    await runtime.jobs.run_due()
    assert (await (await cms.get(url, headers=editor)).json())["status"] == "draft"


async def test_a_trashed_entry_is_not_published(cms, team, clock, runtime, draft):
    url = f"/api/entries/{draft['id']}"
    editor = team["editor"].headers
    await cms.patch(url, json={"publishAt": _iso(clock.now() + timedelta(hours=1))}, headers=editor)
    await cms.delete(url, headers=editor)
    clock.advance(hours=2)
    await runtime.jobs.run_due()
    trash = await (await cms.get("/api/trash", headers=editor)).json()
    assert trash["data"][0]["status"] == "draft"


async def test_runs_once_with_two_workers(cms, team, clock, runtime, settings, db, draft):
    url = f"/api/entries/{draft['id']}"
    await cms.patch(
        url,
        json={"publishAt": _iso(clock.now() + timedelta(minutes=5))},
        headers=team["editor"].headers,
    )
    other = Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock))
    ContentService(other)  # the second process registers its own handler
    clock.advance(minutes=5)
    await asyncio.gather(runtime.jobs.run_due(), other.jobs.run_due())
    jobs = await db.fetch_all(
        "SELECT state, attempts FROM common.jobs WHERE kind = 'content.publish_entry'"
    )
    assert jobs == [{"state": "done", "attempts": 1}]
    count = await db.fetch_val(
        "SELECT count(*) FROM content.activity WHERE action = 'entry.published' AND subject_id = %s",
        (draft["id"],),
    )
    assert count == 1
    assert (await (await cms.get(url, headers=team["editor"].headers)).json())["revision"] == 3


async def test_change_notification_reaches_another_process(cms, team, settings, db, clock, runtime):
    other = ContentService(Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock)))
    seen: list[dict] = []
    other.changes.subscribe(seen.append)
    async with other.lifespan():
        # Listening before the lifespan block starts; the connect counted a resync.
        assert other.content_version() == 1
        before = other.content_version()
        local_before = cms.app[CONTENT_VERSION]()
        await make_type(runtime.db, clock, "post", [])
        resp = await cms.post(
            "/api/entries", json={"type": "post", "title": "Hi"}, headers=team["editor"].headers
        )
        entry = await resp.json()
        assert cms.app[CONTENT_VERSION]() == local_before + 1
        for _ in range(500):
            if other.content_version() > before:
                break
            await asyncio.sleep(0.01)
        assert other.content_version() == before + 1
    event = seen[-1]
    assert event["event"] == "entry.created"
    assert (event["id"], event["slug"], event["type"]) == (entry["id"], "hi", "post")


async def test_a_schedule_survives_a_restart(cms, team, clock, settings, db, draft):
    url = f"/api/entries/{draft['id']}"
    at = clock.now() + timedelta(days=2)
    await cms.patch(url, json={"publishAt": _iso(at)}, headers=team["editor"].headers)
    # A new process: nothing in memory, only the database.
    restarted = Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock))
    ContentService(restarted)
    clock.set(at)
    await restarted.jobs.run_due()
    assert (await (await cms.get(url, headers=team["editor"].headers)).json())[
        "status"
    ] == "published"
