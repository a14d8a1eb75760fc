"""Preview links: POST /api/entries/:id/preview and the delivery GET /preview/:token."""

from __future__ import annotations

from typing import Any

import pytest

from common.jobs import JobQueue
from common.runtime import Runtime
from content.service import ContentService
from tests.content.factories import make_delivery_key, make_type, make_user


@pytest.fixture
async def draft(cms, team, runtime, clock) -> dict[str, Any]:
    await make_type(
        runtime.db,
        clock,
        "post",
        [
            {"key": "body", "type": "markdown"},
            {"key": "writer", "type": "reference", "to": "post"},
            {"key": "blob", "type": "json"},
        ],
        preview_url="https://site.example/blog/{slug}",
    )
    resp = await cms.post(
        "/api/entries",
        json={"type": "post", "title": "Draft", "data": {"body": "saved"}},
        headers=team["author"].headers,
    )
    assert resp.status == 201
    return await resp.json()


@pytest.fixture
async def key(runtime, clock) -> str:
    return await make_delivery_key(runtime.db, clock, ["post"])


async def _preview(cms: Any, who: Any, entry_id: str, body: Any = None) -> Any:
    return await cms.post(f"/api/entries/{entry_id}/preview", json=body, headers=who.headers)


async def _read(cms: Any, token: str, key: str) -> Any:
    return await cms.get(f"/preview/{token}", headers={"X-Api-Key": key})


async def test_a_preview_shows_unsaved_changes_and_saves_nothing(cms, team, draft, key):
    author = team["author"]
    resp = await _preview(cms, author, draft["id"], {"title": "Unsaved", "data": {"body": "new"}})
    assert resp.status == 201, await resp.text()
    link = await resp.json()
    token = link["token"]
    assert link["siteUrl"] == f"https://site.example/blog/draft?preview={token}"
    assert link["url"].endswith(f"/preview/{token}")
    assert link["expiresAt"]
    shown = await _read(cms, token, key)
    assert shown.status == 200
    assert shown.headers["Cache-Control"] == "private, no-store"
    body = await shown.json()
    assert (body["title"], body["status"], body["data"]["body"]) == ("Unsaved", "draft", "new")
    saved = await (await cms.get(f"/api/entries/{draft['id']}", headers=author.headers)).json()
    assert (saved["title"], saved["data"]["body"], saved["revision"]) == ("Draft", "saved", 1)
    # Without a body, the saved entry.
    plain = await (await _preview(cms, author, draft["id"])).json()
    assert (await (await _read(cms, plain["token"], key)).json())["title"] == "Draft"
    # The draft is not on delivery itself.
    assert (await cms.get("/content/post/draft", headers={"X-Api-Key": key})).status == 404


async def test_preview_needs_the_right_to_edit_the_entry(cms, team, draft, runtime, clock):
    assert (await _preview(cms, team["viewer"], draft["id"])).status == 403
    # Another author cannot edit (so cannot preview) the first's draft.
    second = await make_user(runtime.db, clock, "author")
    refused = await _preview(cms, second, draft["id"])
    assert refused.status == 403 and (await refused.json())["code"] == "NOT_YOUR_ENTRY"
    assert (await _preview(cms, team["editor"], draft["id"])).status == 201
    bad = await _preview(cms, team["editor"], draft["id"], {"data": {"writer": "nope-id-1234"}})
    assert bad.status == 400
    extra = await _preview(cms, team["editor"], draft["id"], {"status": "published"})
    assert extra.status == 400
    assert (await _preview(cms, team["editor"], "missing")).status == 404


async def test_a_preview_expires_after_an_hour(cms, team, draft, key, clock):
    token = (await (await _preview(cms, team["author"], draft["id"])).json())["token"]
    clock.advance(minutes=59)
    assert (await _read(cms, token, key)).status == 200
    clock.advance(minutes=1)
    gone = await _read(cms, token, key)
    assert gone.status == 404 and (await gone.json())["code"] == "PREVIEW_EXPIRED"


async def test_a_key_outside_the_type_or_a_wrong_token_reads_nothing(
    cms, team, draft, runtime, clock
):
    token = (await (await _preview(cms, team["author"], draft["id"])).json())["token"]
    pages = await make_delivery_key(runtime.db, clock, ["page"])
    assert (await _read(cms, token, pages)).status == 404
    assert (
        await _read(cms, token + "x", await make_delivery_key(runtime.db, clock, ["*"]))
    ).status == 404
    assert (await cms.get(f"/preview/{token}")).status == 401


async def test_over_one_mebibyte_is_refused_and_the_oldest_are_evicted(cms, team, draft, key):
    editor = team["editor"]
    huge = await _preview(cms, editor, draft["id"], {"data": {"blob": "x" * (1 << 20)}})
    assert huge.status == 413 and (await huge.json())["code"] == "PREVIEW_TOO_LARGE"
    # 16 MiB in all: with snapshots of ~1 MB (under 1 MiB), the 17th pushes out the first.
    big = "y" * 1_000_000
    tokens = []
    for _ in range(17):
        resp = await _preview(cms, editor, draft["id"], {"data": {"blob": big}})
        assert resp.status == 201
        tokens.append((await resp.json())["token"])
    assert (await _read(cms, tokens[0], key)).status == 404
    assert (await _read(cms, tokens[1], key)).status == 200
    assert (await _read(cms, tokens[-1], key)).status == 200


async def test_a_hundred_and_first_snapshot_evicts_the_first(cms, team, draft, key):
    tokens = [
        (await (await _preview(cms, team["author"], draft["id"])).json())["token"]
        for _ in range(101)
    ]
    assert (await _read(cms, tokens[0], key)).status == 404
    assert (await _read(cms, tokens[1], key)).status == 200


async def test_trashing_the_entry_or_restarting_invalidates_previews(
    cms, team, draft, key, settings, db, clock
):
    editor = team["editor"]
    token = (await (await _preview(cms, editor, draft["id"])).json())["token"]
    await cms.delete(f"/api/entries/{draft['id']}", headers=editor.headers)
    assert (await _read(cms, token, key)).status == 404
    await cms.post(f"/api/trash/{draft['id']}/restore", headers=editor.headers)
    assert (await _read(cms, token, key)).status == 404
    fresh = (await (await _preview(cms, editor, draft["id"])).json())["token"]
    assert (await _read(cms, fresh, key)).status == 200
    # Another process of the deployment starting clears them.
    other = ContentService(Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock)))
    async with other.lifespan():
        pass
    assert (await _read(cms, fresh, key)).status == 404
