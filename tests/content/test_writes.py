"""One write (content/writes.py): the change, its activity row and its notification together."""

from __future__ import annotations

from datetime import timedelta

from content.service import CONTENT_VERSION
from tests.content.factories import make_type


async def _activity(cms, headers, subject_kind):
    resp = await cms.get(f"/api/activity?subjectKind={subject_kind}", headers=headers)
    return [a["action"] for a in (await resp.json())["data"]]


async def test_a_refused_write_leaves_no_activity_and_no_new_version(cms, team, runtime, clock):
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    editor = team["editor"].headers
    first = await cms.post(
        "/api/entries", json={"type": "post", "title": "A", "slug": "a"}, headers=editor
    )
    assert first.status == 201
    version = cms.app[CONTENT_VERSION]()
    # The slug clash is found by the INSERT, inside the write's transaction.
    clash = await cms.post(
        "/api/entries", json={"type": "post", "title": "B", "slug": "a"}, headers=editor
    )
    assert clash.status == 409
    assert cms.app[CONTENT_VERSION]() == version
    assert await _activity(cms, editor, "entry") == ["entry.created"]


async def test_a_write_that_needs_no_notification_moves_no_version(cms, team):
    """People and keys are recorded in the activity log, but delivery does not serve them."""
    owner = team["owner"].headers
    version = cms.app[CONTENT_VERSION]()
    resp = await cms.post(
        "/api/users",
        json={"email": "new@example.com", "password": "a long password", "role": "viewer"},
        headers=owner,
    )
    assert resp.status == 201
    assert cms.app[CONTENT_VERSION]() == version
    assert await _activity(cms, owner, "user") == ["user.created"]


async def test_scheduled_publication_is_recorded_like_an_edit_by_the_system(
    cms, team, runtime, clock
):
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    editor = team["editor"].headers
    created = await cms.post("/api/entries", json={"type": "post", "title": "Soon"}, headers=editor)
    entry = await created.json()
    at = clock.now() + timedelta(hours=1)
    url = f"/api/entries/{entry['id']}"
    await cms.patch(url, json={"publishAt": at.isoformat()}, headers=editor)
    clock.advance(hours=1)
    version = cms.app[CONTENT_VERSION]()
    await runtime.jobs.run_due()
    assert cms.app[CONTENT_VERSION]() == version + 1
    live = await (await cms.get(url, headers=editor)).json()
    assert live["revision"] == entry["revision"] + 2
    revision = (await (await cms.get(f"{url}/revisions", headers=editor)).json())["data"][0]
    assert revision["actor"] == {
        "kind": "system",
        "userId": None,
        "name": "scheduler",
        "keyId": None,
        "keyName": None,
    }
    assert revision["status"] == "published" and revision["number"] == live["revision"]
    resp = await cms.get(f"/api/activity?subjectId={entry['id']}", headers=editor)
    published = (await resp.json())["data"][0]
    assert published["action"] == "entry.published"
    assert published["actor"] == {
        "kind": "system",
        "userId": None,
        "keyId": None,
        "name": "scheduler",
    }
    assert published["summary"]["title"] == "Soon" and published["summary"]["type"] == "post"
    assert published["summary"]["scheduledFor"].startswith(at.isoformat()[:19])
