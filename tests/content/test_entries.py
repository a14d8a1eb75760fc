"""Entries through /api: CRUD, filters, roles, trash, single-kind, layout, revisions, status."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.content.factories import bearer, make_agent_key, make_type

POST_FIELDS = [
    {"key": "body", "type": "markdown"},
    {"key": "rating", "type": "number"},
]


@pytest.fixture
async def post_type(runtime, clock):
    return await make_type(runtime.db, clock, "post", POST_FIELDS)


async def _create(cms, who, title="Hello World", **body):
    return await cms.post(
        "/api/entries", json={"type": "post", "title": title, **body}, headers=who.headers
    )


async def test_create_read_update(cms, team, post_type):
    resp = await _create(cms, team["author"], data={"body": "# hi"})
    assert resp.status == 201
    entry = await resp.json()
    assert entry["slug"] == "hello-world" and entry["status"] == "draft"
    assert entry["type"] == "post" and entry["locale"] == "en"
    assert entry["authorId"] == team["author"].id and entry["revision"] == 1
    assert entry["data"] == {"body": "# hi", "rating": None}
    got = await (
        await cms.get(f"/api/entries/{entry['id']}", headers=team["viewer"].headers)
    ).json()
    assert got == entry
    resp = await cms.patch(
        f"/api/entries/{entry['id']}",
        json={"title": "New", "data": {"rating": 4}},
        headers=team["author"].headers,
    )
    updated = await resp.json()
    assert updated["title"] == "New" and updated["slug"] == "hello-world"
    assert updated["data"] == {"body": "# hi", "rating": 4} and updated["revision"] == 2
    again = await _create(cms, team["author"])
    assert (await again.json())["slug"] == "hello-world-2"
    dup = await _create(cms, team["author"], slug="hello-world")
    assert dup.status == 409 and (await dup.json())["details"]["fields"][0]["key"] == "slug"
    other_locale = await _create(cms, team["author"], slug="hello-world", locale="de")
    assert other_locale.status == 201
    for body, key in (
        ({"title": ""}, "title"),
        ({"slug": "Not A Slug"}, "slug"),
        ({"slug": "single"}, "slug"),
        ({"locale": "english!"}, "locale"),
        ({"type": "ghost"}, "type"),
        ({"status": "live"}, "status"),
        ({"colour": 1}, "colour"),
    ):
        resp = await cms.post(
            "/api/entries",
            json={"type": "post", "title": "t", **body},
            headers=team["editor"].headers,
        )
        assert resp.status == 400
        assert key in [f["key"] for f in (await resp.json())["details"]["fields"]]
    assert (await cms.get("/api/entries/nope", headers=team["viewer"].headers)).status == 404


async def test_roles(cms, team, post_type):
    assert (await _create(cms, team["viewer"])).status == 403
    mine = await (await _create(cms, team["author"], title="Mine")).json()
    theirs = await (await _create(cms, team["editor"], title="Theirs")).json()
    author = team["author"].headers
    resp = await cms.patch(f"/api/entries/{theirs['id']}", json={"title": "x"}, headers=author)
    assert resp.status == 403 and (await resp.json())["code"] == "NOT_YOUR_ENTRY"
    assert (await cms.delete(f"/api/entries/{theirs['id']}", headers=author)).status == 403
    resp = await cms.patch(
        f"/api/entries/{mine['id']}", json={"status": "published"}, headers=author
    )
    assert resp.status == 403 and (await resp.json())["details"]["permission"] == "content.publish"
    assert (await _create(cms, team["author"], title="Live", status="published")).status == 403
    # The editor publishes the author's draft; then it is no longer the author's to edit.
    resp = await cms.patch(
        f"/api/entries/{mine['id']}", json={"status": "published"}, headers=team["editor"].headers
    )
    assert (await resp.json())["status"] == "published"
    resp = await cms.patch(f"/api/entries/{mine['id']}", json={"title": "x"}, headers=author)
    assert resp.status == 403 and (await resp.json())["code"] == "NOT_A_DRAFT"
    # Editors work on anyone's content.
    resp = await cms.patch(
        f"/api/entries/{theirs['id']}", json={"title": "Edited"}, headers=team["admin"].headers
    )
    assert resp.status == 200


async def test_agent_key_narrowed_by_grants_and_role(cms, team, runtime, post_type):
    read_only = await make_agent_key(runtime.db, runtime.clock, team["editor"].id, ["content.read"])
    assert (await cms.get("/api/entries", headers=bearer(read_only))).status == 200
    resp = await cms.post(
        "/api/entries", json={"type": "post", "title": "t"}, headers=bearer(read_only)
    )
    assert resp.status == 403
    writer = await make_agent_key(
        runtime.db,
        runtime.clock,
        team["editor"].id,
        ["content.read", "content.write", "content.publish"],
    )
    resp = await cms.post(
        "/api/entries",
        json={"type": "post", "title": "t", "status": "published"},
        headers=bearer(writer),
    )
    assert resp.status == 201
    await cms.patch(
        f"/api/users/{team['editor'].id}", json={"role": "author"}, headers=team["admin"].headers
    )
    resp = await cms.post(
        "/api/entries",
        json={"type": "post", "title": "u", "status": "published"},
        headers=bearer(writer),
    )
    assert resp.status == 403


async def test_list_filters_search_sort_and_paging(cms, team, post_type, runtime, clock):
    await make_type(runtime.db, clock, "page", [])
    editor, author = team["editor"], team["author"]
    for i in range(5):
        clock.advance(seconds=1)
        await _create(cms, editor, title=f"Apple {i}", status="published" if i % 2 else "draft")
    clock.advance(seconds=1)
    await _create(cms, author, title="Banana", locale="fr")
    clock.advance(seconds=1)
    await cms.post("/api/entries", json={"type": "page", "title": "About"}, headers=editor.headers)
    viewer = team["viewer"].headers

    async def listing(query):
        resp = await cms.get(f"/api/entries?{query}", headers=viewer)
        assert resp.status == 200, await resp.text()
        return await resp.json()

    everything = await listing("")
    assert everything["meta"] == {"total": 7, "page": 1, "limit": 20}
    assert everything["data"][0]["title"] == "About"  # newest first
    assert (await listing("type=post"))["meta"]["total"] == 6
    assert [e["title"] for e in (await listing("status=published&sort=title"))["data"]] == [
        "Apple 1",
        "Apple 3",
    ]
    assert [e["title"] for e in (await listing(f"author={author.id}"))["data"]] == ["Banana"]
    assert (await listing("locale=fr"))["meta"]["total"] == 1
    assert (await listing("search=APPLE"))["meta"]["total"] == 5
    assert (await listing("search=%25"))["meta"]["total"] == 0
    page = await listing("type=post&sort=title&limit=2&page=2")
    assert [e["title"] for e in page["data"]] == ["Apple 2", "Apple 3"]
    assert page["meta"] == {"total": 6, "page": 2, "limit": 2}
    for bad in ("limit=0", "limit=101", "page=x", "sort=colour", "status=live"):
        resp = await cms.get(f"/api/entries?{bad}", headers=viewer)
        assert resp.status == 400


async def test_trash_restore_purge(cms, team, post_type):
    author = team["author"]
    entry = await (await _create(cms, author)).json()
    resp = await cms.delete(f"/api/entries/{entry['id']}", headers=author.headers)
    assert resp.status == 200 and (await resp.json())["deletedAt"]
    assert (await cms.get(f"/api/entries/{entry['id']}", headers=author.headers)).status == 404
    listed = await (await cms.get("/api/entries", headers=author.headers)).json()
    assert listed["meta"]["total"] == 0
    assert (await cms.get("/api/trash", headers=team["viewer"].headers)).status == 403
    trash = await (await cms.get("/api/trash", headers=author.headers)).json()
    assert [e["id"] for e in trash["data"]] == [entry["id"]]
    # The slug stays taken while the entry is in the trash.
    assert (await _create(cms, author, slug="hello-world")).status == 409
    assert (await cms.delete(f"/api/trash/{entry['id']}", headers=author.headers)).status == 403
    resp = await cms.post(f"/api/trash/{entry['id']}/restore", headers=author.headers)
    assert resp.status == 200 and (await resp.json())["deletedAt"] is None
    assert (
        await cms.post(f"/api/trash/{entry['id']}/restore", headers=author.headers)
    ).status == 404
    await cms.delete(f"/api/entries/{entry['id']}", headers=author.headers)
    assert (
        await cms.delete(f"/api/trash/{entry['id']}", headers=team["editor"].headers)
    ).status == 204
    assert (await (await cms.get("/api/trash", headers=author.headers)).json())["data"] == []


async def test_a_published_entry_comes_back_from_the_trash_as_a_draft(cms, team, post_type):
    editor = team["editor"]
    entry = await (await _create(cms, editor, status="published")).json()
    await cms.delete(f"/api/entries/{entry['id']}", headers=editor.headers)
    restored = await (
        await cms.post(f"/api/trash/{entry['id']}/restore", headers=editor.headers)
    ).json()
    assert restored["status"] == "draft"


async def test_single_kind_type_holds_exactly_one_entry(cms, team, runtime, clock, post_type):
    await make_type(runtime.db, clock, "home", [{"key": "tagline", "type": "text"}], single=True)
    editor = team["editor"].headers
    first = await cms.post("/api/entries", json={"type": "home", "title": "Home"}, headers=editor)
    assert first.status == 201
    second = await cms.post(
        "/api/entries", json={"type": "home", "title": "Home 2"}, headers=editor
    )
    assert second.status == 409 and (await second.json())["code"] == "SINGLE_EXISTS"
    await _create(cms, team["editor"], title="a")
    await _create(cms, team["editor"], title="b")
    resp = await cms.patch("/api/types/post", json={"single": True}, headers=team["admin"].headers)
    assert resp.status == 409 and (await resp.json())["code"] == "SINGLE_TYPE_HAS_ENTRIES"


async def test_layout_is_validated_and_revised(cms, team, post_type):
    editor = team["editor"].headers
    layout = {"order": ["hero", "faq", "cta"], "hidden": ["faq"]}
    entry = await (await _create(cms, team["editor"], data={"__layout": layout})).json()
    assert entry["data"]["__layout"] == layout
    for bad, key in (
        ({"order": "hero"}, "__layout.order"),
        ({"order": ["a", "a"]}, "__layout.order"),
        ({"hidden": [3]}, "__layout.hidden.0"),
        ({"colour": []}, "__layout.colour"),
        ("x", "__layout"),
    ):
        resp = await cms.patch(
            f"/api/entries/{entry['id']}", json={"data": {"__layout": bad}}, headers=editor
        )
        assert [f["key"] for f in (await resp.json())["details"]["fields"]] == [key]
    new = {"order": ["cta", "hero"], "hidden": []}
    await cms.patch(f"/api/entries/{entry['id']}", json={"data": {"__layout": new}}, headers=editor)
    revs = await (await cms.get(f"/api/entries/{entry['id']}/revisions", headers=editor)).json()
    assert [r["data"]["__layout"] for r in revs["data"]] == [new, layout]
    restored = await cms.post(f"/api/entries/{entry['id']}/revisions/1/restore", headers=editor)
    assert (await restored.json())["data"]["__layout"] == layout


async def test_revisions_newest_first_and_restore_is_a_new_revision(cms, team, post_type):
    author = team["author"]
    entry = await (await _create(cms, author, data={"body": "v1"})).json()
    url = f"/api/entries/{entry['id']}"
    await cms.patch(url, json={"data": {"body": "v2"}, "title": "Second"}, headers=author.headers)
    await cms.patch(url, json={"data": {"body": "v3"}}, headers=author.headers)
    revs = await (await cms.get(f"{url}/revisions", headers=team["viewer"].headers)).json()
    assert [r["number"] for r in revs["data"]] == [3, 2, 1]
    assert [r["data"]["body"] for r in revs["data"]] == ["v3", "v2", "v1"]
    assert revs["data"][0]["actor"]["userId"] == author.id
    one = await (await cms.get(f"{url}/revisions/1", headers=team["viewer"].headers)).json()
    assert one["title"] == "Hello World"
    assert (await cms.get(f"{url}/revisions/9", headers=team["viewer"].headers)).status == 404
    assert (
        await cms.post(f"{url}/revisions/1/restore", headers=team["viewer"].headers)
    ).status == 403
    resp = await cms.post(f"{url}/revisions/1/restore", headers=author.headers)
    restored = await resp.json()
    assert restored["title"] == "Hello World" and restored["data"]["body"] == "v1"
    assert restored["revision"] == 4
    revs = await (await cms.get(f"{url}/revisions", headers=author.headers)).json()
    assert revs["data"][0]["note"] == "restored from revision 1"


async def test_status_moves(cms, team, post_type):
    editor = team["editor"].headers
    entry = await (await _create(cms, team["editor"])).json()
    url = f"/api/entries/{entry['id']}"
    bad = await cms.patch(url, json={"status": "unpublished"}, headers=editor)
    assert bad.status == 400
    live = await (await cms.patch(url, json={"status": "published"}, headers=editor)).json()
    assert live["status"] == "published" and live["publishedAt"]
    down = await (await cms.patch(url, json={"status": "unpublished"}, headers=editor)).json()
    assert down["status"] == "unpublished"
    back = await (await cms.patch(url, json={"status": "draft"}, headers=editor)).json()
    assert back["status"] == "draft"
    activity = await (
        await cms.get(f"/api/activity?subjectId={entry['id']}", headers=editor)
    ).json()
    assert [a["action"] for a in activity["data"]] == [
        "entry.drafted",
        "entry.unpublished",
        "entry.published",
        "entry.created",
    ]


async def test_removing_and_retyping_a_field_never_corrupts_entries(cms, team, post_type):
    editor = team["editor"].headers
    entry = await (await _create(cms, team["editor"], data={"body": "text", "rating": 5})).json()
    url = f"/api/entries/{entry['id']}"
    # Remove "body": its value is hidden, not deleted.
    resp = await cms.patch(
        "/api/types/post",
        json={"fields": [{"key": "rating", "type": "number"}]},
        headers=team["admin"].headers,
    )
    assert resp.status == 200
    assert (await (await cms.get(url, headers=editor)).json())["data"] == {"rating": 5}
    # Put it back before the entry is saved: the value returns.
    await cms.patch("/api/types/post", json={"fields": POST_FIELDS}, headers=team["admin"].headers)
    assert (await (await cms.get(url, headers=editor)).json())["data"]["body"] == "text"
    # Retype "rating" to a select: the stored 5 no longer fits; the next save names it.
    retyped = [
        {"key": "body", "type": "markdown"},
        {"key": "rating", "type": "select", "options": ["good", "bad"]},
    ]
    await cms.patch("/api/types/post", json={"fields": retyped}, headers=team["admin"].headers)
    assert (await (await cms.get(url, headers=editor)).json())["data"]["rating"] == 5
    # Saving the title alone leaves data untouched; saving data validates all of it.
    assert (await cms.patch(url, json={"title": "x"}, headers=editor)).status == 200
    resp = await cms.patch(url, json={"data": {"body": "new"}}, headers=editor)
    assert resp.status == 400
    assert (await resp.json())["details"]["fields"] == [
        {"key": "rating", "message": "must be one of good, bad"}
    ]
    resp = await cms.patch(url, json={"data": {"rating": "good"}}, headers=editor)
    assert resp.status == 200 and (await resp.json())["data"]["rating"] == "good"
    # Removed, then the entry's data is saved: the value is dropped from the new
    # revision (the old revision keeps it), so re-adding the field finds it empty.
    await cms.patch(
        "/api/types/post",
        json={"fields": [{"key": "rating", "type": "select", "options": ["good", "bad"]}]},
        headers=team["admin"].headers,
    )
    await cms.patch(url, json={"data": {"rating": "bad"}}, headers=editor)
    await cms.patch("/api/types/post", json={"fields": retyped}, headers=team["admin"].headers)
    assert (await (await cms.get(url, headers=editor)).json())["data"]["body"] == ""
    revs = await (await cms.get(f"{url}/revisions", headers=editor)).json()
    assert "body" not in revs["data"][0]["data"] and revs["data"][1]["data"]["body"] == "text"
    # A type with entries cannot be deleted.
    resp = await cms.delete("/api/types/post", headers=team["admin"].headers)
    assert resp.status == 409 and (await resp.json())["code"] == "TYPE_IN_USE"


async def test_status_scheduled_lists_the_drafts_waiting_for_their_time(
    cms, team, post_type, clock
):
    """The admin's "Scheduled" filter: drafts with a publishAt; "draft" still includes them."""
    editor = team["editor"]
    tomorrow = (clock.now() + timedelta(days=1)).isoformat()
    soon = await (await _create(cms, editor, title="Soon")).json()
    await _create(cms, editor, title="Someday")
    await _create(cms, editor, title="Live", status="published")
    clock.advance(seconds=1)
    scheduled = await cms.patch(
        f"/api/entries/{soon['id']}",
        json={"publishAt": tomorrow},
        headers=editor.headers,
    )
    assert scheduled.status == 200, await scheduled.text()

    async def titles(status):
        resp = await cms.get(f"/api/entries?status={status}", headers=team["viewer"].headers)
        assert resp.status == 200, await resp.text()
        return sorted(e["title"] for e in (await resp.json())["data"])

    assert await titles("scheduled") == ["Soon"]
    assert await titles("draft") == ["Someday", "Soon"]
    assert await titles("published") == ["Live"]
