"""Taxonomies and terms under /api/taxonomies, and entries filed under terms."""

from __future__ import annotations

import pytest

from content.service import CONTENT_VERSION
from tests.content.factories import bearer, make_agent_key, make_type


async def _activity(cms, headers, subject_kind):
    resp = await cms.get(f"/api/activity?subjectKind={subject_kind}", headers=headers)
    return [(a["action"], a["subject"]["id"]) for a in (await resp.json())["data"]]


async def _term(cms, who, taxonomy, **body):
    resp = await cms.post(f"/api/taxonomies/{taxonomy}/terms", json=body, headers=who.headers)
    assert resp.status == 201, await resp.text()
    return await resp.json()


@pytest.fixture
async def post_type(runtime, clock):
    return await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])


async def test_categories_and_tags_are_built_in_and_cannot_be_deleted(cms, team):
    listed = await (await cms.get("/api/taxonomies", headers=team["viewer"].headers)).json()
    shapes = {t["slug"]: (t["hierarchical"], t["builtin"]) for t in listed["data"]}
    assert shapes == {"categories": (True, True), "tags": (False, True)}
    refused = await cms.delete("/api/taxonomies/tags", headers=team["owner"].headers)
    assert refused.status == 409
    assert (await refused.json())["code"] == "TAXONOMY_BUILTIN"
    renamed = await cms.patch(
        "/api/taxonomies/tags", json={"name": "Keywords"}, headers=team["editor"].headers
    )
    assert renamed.status == 200 and (await renamed.json())["name"] == "Keywords"
    flip = await cms.patch(
        "/api/taxonomies/tags", json={"hierarchical": True}, headers=team["editor"].headers
    )
    assert flip.status == 400
    assert (await flip.json())["details"]["fields"][0]["key"] == "hierarchical"


async def test_taxonomy_crud_needs_taxonomy_manage(cms, team, runtime, clock):
    body = {"name": "Regions", "hierarchical": True}
    for role in ("viewer", "author"):
        resp = await cms.post("/api/taxonomies", json=body, headers=team[role].headers)
        assert resp.status == 403
        error = await resp.json()
        assert set(error) == {"error", "code", "details"} and error["code"] == "FORBIDDEN"
    # A key without the grant is refused though its account holds the permission.
    key = await make_agent_key(runtime.db, clock, team["admin"].id, ["content.read"])
    assert (await cms.post("/api/taxonomies", json=body, headers=bearer(key))).status == 403
    created = await cms.post("/api/taxonomies", json=body, headers=team["editor"].headers)
    assert created.status == 201
    taxonomy = await created.json()
    assert taxonomy["slug"] == "regions" and taxonomy["builtin"] is False
    dup = await cms.post("/api/taxonomies", json=body, headers=team["editor"].headers)
    assert dup.status == 409
    assert (await dup.json())["details"]["fields"] == [
        {"key": "slug", "message": "is already in use"}
    ]
    bad = await cms.post(
        "/api/taxonomies",
        json={"name": "", "slug": "Not A Slug", "colour": 1},
        headers=team["editor"].headers,
    )
    assert bad.status == 400
    keys = {f["key"] for f in (await bad.json())["details"]["fields"]}
    assert keys == {"name", "slug", "colour"}
    await _term(cms, team["editor"], "regions", name="Europe")
    assert (
        await cms.delete("/api/taxonomies/regions", headers=team["author"].headers)
    ).status == 403
    assert (
        await cms.delete("/api/taxonomies/regions", headers=team["editor"].headers)
    ).status == 204
    gone = await cms.get("/api/taxonomies/regions/terms", headers=team["viewer"].headers)
    assert gone.status == 404
    assert await _activity(cms, team["viewer"].headers, "taxonomy") == [
        ("taxonomy.deleted", "regions"),
        ("taxonomy.created", "regions"),
    ]


async def test_terms_slug_unique_within_a_taxonomy_and_parents_only_in_hierarchies(cms, team):
    editor = team["editor"]
    news = await _term(cms, editor, "categories", name="News & Views")
    assert news["slug"] == "news-views" and news["taxonomy"] == "categories"
    # The same slug in another taxonomy is another term.
    tag = await _term(cms, editor, "tags", name="News", slug="news-views")
    assert tag["id"] != news["id"]
    dup = await cms.post(
        "/api/taxonomies/categories/terms",
        json={"name": "N", "slug": "news-views"},
        headers=editor.headers,
    )
    assert dup.status == 409
    assert (await dup.json())["details"]["fields"][0]["key"] == "slug"
    local = await _term(cms, editor, "categories", name="Local", parentId=news["id"])
    assert local["parentId"] == news["id"]
    flat = await cms.post(
        "/api/taxonomies/tags/terms",
        json={"name": "x", "parentId": tag["id"]},
        headers=editor.headers,
    )
    assert flat.status == 400
    assert (await flat.json())["details"]["fields"][0]["key"] == "parentId"
    cycle = await cms.patch(
        f"/api/taxonomies/categories/terms/{news['id']}",
        json={"parentId": local["id"]},
        headers=editor.headers,
    )
    assert cycle.status == 400
    assert (await cycle.json())["details"]["fields"][0]["key"] == "parentId"
    # A term of another taxonomy is not found under this one.
    wrong = await cms.patch(
        f"/api/taxonomies/tags/terms/{news['id']}", json={"name": "x"}, headers=editor.headers
    )
    assert wrong.status == 404
    renamed = await cms.patch(
        f"/api/taxonomies/categories/terms/{local['id']}",
        json={"name": "Local news", "slug": "local-news"},
        headers=editor.headers,
    )
    assert (await renamed.json())["slug"] == "local-news"
    assert (
        await cms.delete(
            f"/api/taxonomies/categories/terms/{news['id']}", headers=team["author"].headers
        )
    ).status == 403
    deleted = await cms.delete(
        f"/api/taxonomies/categories/terms/{news['id']}", headers=editor.headers
    )
    assert deleted.status == 204
    # Its child moves up to the deleted term's parent (the root).
    terms = await (
        await cms.get("/api/taxonomies/categories/terms", headers=team["viewer"].headers)
    ).json()
    assert [(t["slug"], t["parentId"]) for t in terms["data"]] == [("local-news", None)]
    actions = [a for a, _ in await _activity(cms, team["viewer"].headers, "term")]
    assert actions == [
        "term.deleted",
        "term.updated",
        "term.created",
        "term.created",
        "term.created",
    ]


async def test_every_change_moves_the_content_version(cms, team):
    editor = team["editor"].headers
    version = cms.app[CONTENT_VERSION]()
    await cms.post("/api/taxonomies", json={"name": "Series"}, headers=editor)
    term = await _term(cms, team["editor"], "series", name="One")
    await cms.patch(
        f"/api/taxonomies/series/terms/{term['id']}", json={"name": "1"}, headers=editor
    )
    await cms.delete(f"/api/taxonomies/series/terms/{term['id']}", headers=editor)
    await cms.delete("/api/taxonomies/series", headers=editor)
    assert cms.app[CONTENT_VERSION]() == version + 5
    # A refused change moves nothing.
    await cms.post("/api/taxonomies", json={"name": ""}, headers=editor)
    assert cms.app[CONTENT_VERSION]() == version + 5


async def test_entries_are_filed_under_terms_and_listed_by_term(cms, team, post_type):
    editor, author = team["editor"], team["author"]
    news = await _term(cms, editor, "categories", name="News")
    howto = await _term(cms, editor, "tags", name="How-to")
    created = await cms.post(
        "/api/entries",
        json={"type": "post", "title": "Filed", "terms": [news["id"], howto["id"]]},
        headers=author.headers,
    )
    assert created.status == 201
    entry = await created.json()
    assert [t["slug"] for t in entry["terms"]] == ["news", "how-to"]
    other = await (
        await cms.post(
            "/api/entries", json={"type": "post", "title": "Other"}, headers=author.headers
        )
    ).json()
    assert other["terms"] == []

    async def listed(term):
        resp = await cms.get(f"/api/entries?term={term}", headers=team["viewer"].headers)
        assert resp.status == 200
        return [e["title"] for e in (await resp.json())["data"]]

    assert await listed("news") == ["Filed"]
    assert await listed("categories:news") == ["Filed"]
    assert await listed("tags:news") == []
    assert await listed("how-to") == ["Filed"]

    version = cms.app[CONTENT_VERSION]()
    url = f"/api/entries/{other['id']}"
    refiled = await cms.patch(url, json={"terms": [howto["id"]]}, headers=author.headers)
    assert refiled.status == 200
    assert [t["id"] for t in (await refiled.json())["terms"]] == [howto["id"]]
    assert cms.app[CONTENT_VERSION]() == version + 1
    assert sorted(await listed("how-to")) == ["Filed", "Other"]
    # Filing alone writes no revision (as in WordPress), but is in the activity log.
    assert (await (await cms.get(url, headers=editor.headers)).json())["revision"] == 1
    activity = await (
        await cms.get(f"/api/activity?subjectId={other['id']}", headers=editor.headers)
    ).json()
    assert activity["data"][0]["action"] == "entry.updated"
    assert activity["data"][0]["summary"]["fields"] == ["terms"]

    bad = await cms.patch(
        url, json={"terms": ["nope", howto["id"], howto["id"]]}, headers=author.headers
    )
    assert bad.status == 400
    keys = [f["key"] for f in (await bad.json())["details"]["fields"]]
    assert keys == ["terms.2", "terms.0"]
    # A viewer cannot file; an author cannot refile someone else's entry.
    viewer = await cms.patch(url, json={"terms": []}, headers=team["viewer"].headers)
    assert viewer.status == 403
    mine = await (
        await cms.post(
            "/api/entries", json={"type": "post", "title": "Mine"}, headers=editor.headers
        )
    ).json()
    theirs = await cms.patch(
        f"/api/entries/{mine['id']}", json={"terms": [news["id"]]}, headers=author.headers
    )
    assert theirs.status == 403
    # Deleting a term unfiles it everywhere.
    await cms.delete(f"/api/taxonomies/categories/terms/{news['id']}", headers=editor.headers)
    got = await (await cms.get(f"/api/entries/{entry['id']}", headers=editor.headers)).json()
    assert [t["slug"] for t in got["terms"]] == ["how-to"]


async def test_include_terms_lists_every_taxonomy_with_its_terms_in_one_answer(cms, team):
    """The entry editor's term picker: one request, however many taxonomies."""
    editor = team["editor"]
    await _term(cms, editor, "tags", name="Oolong")
    await _term(cms, editor, "tags", name="Assam")
    tea = await _term(cms, editor, "categories", name="Tea")
    await _term(cms, editor, "categories", name="Green", parentId=tea["id"])
    resp = await cms.get("/api/taxonomies?include=terms", headers=team["viewer"].headers)
    assert resp.status == 200
    found = {
        t["slug"]: [(m["name"], m["parentId"]) for m in t["terms"]]
        for t in (await resp.json())["data"]
    }
    assert found == {
        "categories": [("Green", tea["id"]), ("Tea", None)],
        "tags": [("Assam", None), ("Oolong", None)],
    }
    plain = await (await cms.get("/api/taxonomies", headers=team["viewer"].headers)).json()
    assert all("terms" not in t for t in plain["data"])
    bad = await cms.get("/api/taxonomies?include=authors", headers=team["viewer"].headers)
    assert bad.status == 400
    assert (await bad.json())["details"]["fields"][0]["key"] == "include"
