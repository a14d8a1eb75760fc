"""The delivery API: every route, scopes, publication, expansion, caching and CORS."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from common.jobs import JobQueue
from common.runtime import Runtime
from content.context import CONTEXT
from content.delivery import expand, store
from content.service import ContentService
from tests.content.factories import make_delivery_key, make_media, make_type

POST_FIELDS = [
    {"key": "body", "type": "markdown"},
    {"key": "hero", "type": "media"},
    {"key": "pics", "type": "gallery"},
    {"key": "writer", "type": "reference", "to": "person"},
    {"key": "related", "type": "reference", "to": "post", "multiple": True},
    {"key": "secret", "type": "reference", "to": "secret"},
    {
        "key": "blocks",
        "type": "list",
        "fields": [
            {"key": "img", "type": "media"},
            {"key": "who", "type": "reference", "to": "person"},
        ],
    },
]


async def _entry(cms: Any, who: Any, type_name: str, title: str, **body: Any) -> dict[str, Any]:
    body.setdefault("status", "published")
    resp = await cms.post(
        "/api/entries", json={"type": type_name, "title": title, **body}, headers=who.headers
    )
    assert resp.status == 201, await resp.text()
    return await resp.json()


@pytest.fixture
async def site(cms, team, runtime, clock) -> dict[str, Any]:
    """Published and draft entries of four types, with media and references."""
    db = runtime.db
    await make_type(db, clock, "person", [{"key": "name", "type": "text"}])
    await make_type(db, clock, "secret", [])
    await make_type(db, clock, "post", POST_FIELDS, preview_url="https://site.example/{slug}")
    await make_type(db, clock, "home", [{"key": "headline", "type": "text"}], single=True)
    editor = team["editor"]
    m1, m2 = await make_media(db, clock), await make_media(db, clock)
    alice = await _entry(cms, editor, "person", "Alice", data={"name": "Alice"})
    bob = await _entry(cms, editor, "person", "Bob", status="draft")
    hidden = await _entry(cms, editor, "secret", "Classified")
    second = await _entry(cms, editor, "post", "Second")
    draft = await _entry(cms, editor, "post", "Draft post", status="draft")
    trashed = await _entry(cms, editor, "post", "Gone")
    clock.advance(seconds=1)
    first = await _entry(
        cms,
        editor,
        "post",
        "First",
        data={
            "body": "# hi",
            "hero": m1,
            "pics": [m1, m2],
            "writer": alice["id"],
            "related": [second["id"], draft["id"]],
            "secret": hidden["id"],
            "blocks": [{"img": m2, "who": bob["id"]}, {"who": alice["id"]}],
        },
    )
    assert (await cms.delete(f"/api/entries/{trashed['id']}", headers=editor.headers)).status == 200
    home = await _entry(cms, editor, "home", "Home", data={"headline": "Welcome"})
    keys = {
        "all": await make_delivery_key(db, clock, ["*"]),
        "posts": await make_delivery_key(db, clock, ["post"]),
        "people": await make_delivery_key(db, clock, ["post", "person"]),
    }
    return {
        "m1": m1,
        "m2": m2,
        "alice": alice,
        "bob": bob,
        "hidden": hidden,
        "first": first,
        "second": second,
        "draft": draft,
        "trashed": trashed,
        "home": home,
        "keys": keys,
    }


async def _get(cms: Any, path: str, key: str, **headers: str) -> Any:
    return await cms.get(path, headers={"X-Api-Key": key, **headers})


async def _json(cms: Any, path: str, key: str) -> Any:
    resp = await _get(cms, path, key)
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def test_lists_serve_published_entries_of_scoped_types_only(cms, site):
    keys = site["keys"]
    listed = await _json(cms, "/content/post", keys["posts"])
    assert [e["title"] for e in listed["data"]] == ["First", "Second"]  # newest publication first
    assert listed["meta"] == {"total": 2, "page": 1, "limit": 20}
    assert "status" not in listed["data"][0] and "authorId" not in listed["data"][0]
    paged = await _json(cms, "/content/post?limit=1&page=2&sort=title", keys["posts"])
    assert [e["title"] for e in paged["data"]] == ["Second"]
    assert paged["meta"] == {"total": 2, "page": 2, "limit": 1}
    for path, key in (
        ("/content/person", keys["posts"]),
        ("/content/secret", keys["people"]),
        ("/content/ghost", keys["all"]),
    ):
        resp = await _get(cms, path, key)
        assert resp.status == 404, path
    types = await _json(cms, "/content", keys["people"])
    assert sorted(t["name"] for t in types["data"]) == ["person", "post"]
    for query, field in (
        ("sort=body", "sort"),
        ("limit=1000", "limit"),
        ("include=email", "include"),
    ):
        bad = await _get(cms, f"/content/post?{query}", keys["all"])
        assert bad.status == 400
        assert (await bad.json())["details"]["fields"][0]["key"] == field


async def test_list_filters_by_term_and_locale_and_includes_terms_and_author(cms, team, site):
    editor = team["editor"]
    resp = await cms.post(
        "/api/taxonomies/tags/terms", json={"name": "News"}, headers=editor.headers
    )
    news = await resp.json()
    await cms.patch(
        f"/api/entries/{site['second']['id']}", json={"terms": [news["id"]]}, headers=editor.headers
    )
    await _entry(cms, editor, "post", "Bonjour", locale="fr")
    key = site["keys"]["all"]
    tagged = await _json(cms, "/content/post?term=news&include=terms,author", key)
    assert [e["title"] for e in tagged["data"]] == ["Second"]
    item = tagged["data"][0]
    assert item["terms"] == [{"id": news["id"], "taxonomy": "tags", "slug": "news", "name": "News"}]
    assert item["author"] == {"id": editor.id, "name": "Editor"}
    french = await _json(cms, "/content/post?locale=fr", key)
    assert [e["title"] for e in french["data"]] == ["Bonjour"]
    plain = await _json(cms, "/content/post?locale=en", key)
    assert "terms" not in plain["data"][0] and "author" not in plain["data"][0]


async def test_one_entry_expands_media_and_rechecks_references(cms, site):
    keys = site["keys"]
    whole = await _json(cms, "/content/post/first", keys["all"])
    data = whole["data"]
    assert data["hero"]["id"] == site["m1"] and data["hero"]["url"] == f"http://x/{site['m1']}"
    assert [m["id"] for m in data["pics"]] == [site["m1"], site["m2"]]
    assert data["writer"]["title"] == "Alice" and data["writer"]["data"] == {"name": "Alice"}
    # The draft among the related posts is left out, never leaked.
    assert [r["slug"] for r in data["related"]] == ["second"]
    assert data["secret"]["title"] == "Classified"
    assert data["blocks"][0]["img"]["id"] == site["m2"]
    assert data["blocks"][0]["who"] is None  # Bob is a draft
    assert data["blocks"][1]["who"]["title"] == "Alice"
    # A key that cannot read secrets, or people, does not get them through a reference.
    scoped = (await _json(cms, "/content/post/first", keys["people"]))["data"]
    assert scoped["secret"] is None and scoped["writer"]["title"] == "Alice"
    narrow = (await _json(cms, "/content/post/first", keys["posts"]))["data"]
    assert narrow["writer"] is None and narrow["blocks"][1]["who"] is None
    assert [r["slug"] for r in narrow["related"]] == ["second"]
    for slug in ("draft-post", "gone", "nothing"):
        assert (await _get(cms, f"/content/post/{slug}", keys["all"])).status == 404
    assert (await _get(cms, "/content/person/alice", keys["posts"])).status == 404


async def test_references_nest_to_a_bounded_depth(cms, team, site):
    """A cycle (a post related to itself through another) ends in stubs."""
    editor = team["editor"].headers
    first, second = site["first"], site["second"]
    await cms.patch(
        f"/api/entries/{second['id']}", json={"data": {"related": [first["id"]]}}, headers=editor
    )
    data = (await _json(cms, "/content/post/first", site["keys"]["all"]))["data"]
    level1 = data["related"][0]
    assert level1["slug"] == "second"
    level2 = level1["data"]["related"][0]
    assert level2["slug"] == "first" and "data" in level2
    assert level2["data"]["related"] == [{"id": second["id"], "type": "post", "slug": "second"}]
    assert expand.MAX_DEPTH == 2


async def test_a_page_of_references_is_resolved_in_a_fixed_number_of_queries(
    cms, team, site, monkeypatch
):
    for n in range(15):
        await _entry(
            cms,
            team["editor"],
            "post",
            f"Many {n}",
            data={
                "writer": site["alice"]["id"],
                "related": [site["first"]["id"]],
                "hero": site["m1"],
            },
        )
    calls: list[int] = []
    original = store.published_entries

    async def counted(conn: Any, ids: list[str]) -> Any:
        calls.append(len(ids))
        return await original(conn, ids)

    monkeypatch.setattr(store, "published_entries", counted)
    page = await _json(cms, "/content/post?limit=20", site["keys"]["all"])
    assert len(page["data"]) == 17
    assert all(
        e["data"]["writer"] and e["data"]["writer"]["title"] == "Alice" for e in page["data"][:15]
    )
    assert len(calls) <= expand.MAX_DEPTH + 1


async def test_single_settings_and_menus(cms, team, site):
    keys = site["keys"]
    home = await _json(cms, "/content/home/single", keys["all"])
    assert home["title"] == "Home" and home["data"] == {"headline": "Welcome"}
    not_single = await _get(cms, "/content/post/single", keys["all"])
    assert not_single.status == 404 and (await not_single.json())["code"] == "NOT_SINGLE"
    assert (await _get(cms, "/content/home/single", keys["posts"])).status == 404
    await cms.patch(
        "/api/settings",
        json={"title": "My site", "logo": site["m1"]},
        headers=team["admin"].headers,
    )
    settings = await _json(cms, "/site/settings", keys["posts"])
    assert settings["title"] == "My site" and settings["logo"] == f"http://x/{site['m1']}"
    items = [
        {"label": "First", "entryId": site["first"]["id"]},
        {"label": "Draft", "entryId": site["draft"]["id"]},
        {"label": "Docs", "url": "https://docs.example"},
    ]
    await cms.post(
        "/api/menus", json={"name": "main", "items": items}, headers=team["editor"].headers
    )
    menu = await _json(cms, "/site/menus/main", keys["posts"])
    assert [(i["label"], i["url"]) for i in menu["items"]] == [
        ("First", "https://site.example/first"),
        ("Docs", "https://docs.example"),
    ]
    assert (await _get(cms, "/site/menus/nope", keys["posts"])).status == 404


async def test_caching_headers_etag_and_304(cms, team, site):
    key = site["keys"]["all"]
    resp = await _get(cms, "/content/post/first", key)
    etag = resp.headers["ETag"]
    assert etag.startswith('"') and not etag.startswith("W/")
    assert resp.headers["Cache-Control"].startswith("private")
    assert "X-Api-Key" in resp.headers["Vary"] and "Authorization" in resp.headers["Vary"]
    again = await _get(cms, "/content/post/first", key, **{"If-None-Match": etag})
    assert again.status == 304 and again.headers["ETag"] == etag
    assert await again.read() == b""
    listed = await _get(cms, "/content/post", key)
    assert (
        await _get(cms, "/content/post", key, **{"If-None-Match": listed.headers["ETag"]})
    ).status == 304
    # A publish changes the answer and so its ETag: the old one no longer matches.
    await cms.patch(
        f"/api/entries/{site['first']['id']}",
        json={"title": "First!"},
        headers=team["editor"].headers,
    )
    changed = await _get(cms, "/content/post/first", key, **{"If-None-Match": etag})
    assert changed.status == 200 and (await changed.json())["title"] == "First!"
    assert changed.headers["ETag"] != etag


async def test_unpublishing_and_revoking_take_effect_on_the_next_read(cms, team, site):
    key = site["keys"]["all"]
    assert (await _get(cms, "/content/post/second", key)).status == 200
    await cms.patch(
        f"/api/entries/{site['second']['id']}",
        json={"status": "unpublished"},
        headers=team["editor"].headers,
    )
    assert (await _get(cms, "/content/post/second", key)).status == 404
    first = (await _json(cms, "/content/post/first", key))["data"]
    assert first["related"] == []
    keys = await (await cms.get("/api/delivery-keys", headers=team["admin"].headers)).json()
    for row in keys["data"]:
        await cms.delete(f"/api/delivery-keys/{row['id']}", headers=team["admin"].headers)
    refused = await _get(cms, "/content/post/first", key)
    assert refused.status == 401 and (await refused.json())["code"] == "KEY_REVOKED"


async def test_cors_only_for_delivery_origins(cms, site):
    ctx = cms.app[CONTEXT]
    object.__setattr__(
        ctx, "config", replace(ctx.config, delivery_origins=("https://site.example",))
    )
    key = site["keys"]["all"]
    for path in ("/content/post/first", "/site/settings", "/preview/x"):
        ok = await cms.options(
            path, headers={"Origin": "https://site.example", "Access-Control-Request-Method": "GET"}
        )
        assert ok.status == 204, path
        assert "If-None-Match" in ok.headers["Access-Control-Allow-Headers"]
        refused = await cms.options(path, headers={"Origin": "https://evil.example"})
        assert refused.status == 403
    allowed = await _get(cms, "/content/post", key, Origin="https://site.example")
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://site.example"
    assert "ETag" in allowed.headers["Access-Control-Expose-Headers"]
    other = await _get(cms, "/content/post", key, Origin="https://evil.example")
    assert other.status == 200 and "Access-Control-Allow-Origin" not in other.headers
    server = await _get(cms, "/content/post", key)
    assert server.status == 200 and "Access-Control-Allow-Origin" not in server.headers
    # A website's browser code asks for its realtime ticket the same way.
    ticket_preflight = await cms.options(
        "/realtime/delivery/ticket",
        headers={"Origin": "https://site.example", "Access-Control-Request-Method": "POST"},
    )
    assert ticket_preflight.status == 204
    assert "POST" in ticket_preflight.headers["Access-Control-Allow-Methods"]
    ticket = await cms.post(
        "/realtime/delivery/ticket", headers={"X-Api-Key": key, "Origin": "https://site.example"}
    )
    assert ticket.status == 201
    assert ticket.headers["Access-Control-Allow-Origin"] == "https://site.example"
    elsewhere = await cms.post(
        "/realtime/delivery/ticket", headers={"X-Api-Key": key, "Origin": "https://evil.example"}
    )
    assert "Access-Control-Allow-Origin" not in elsewhere.headers


async def test_other_credentials_are_refused_on_every_delivery_route(cms, team, site):
    paths = (
        "/content/post",
        "/content/post/first",
        "/content/home/single",
        "/site/settings",
        "/site/menus/main",
        "/preview/abc",
    )
    for path in paths:
        assert (await cms.get(path)).status == 401, path
        assert (await cms.get(path, headers=team["owner"].headers)).status in (401, 403), path


async def test_a_publish_in_one_process_is_seen_by_the_next_read_in_another(
    cms, team, site, settings, db, clock, aiohttp_client
):
    """Two services on one database: the other one's cache is emptied by the notification."""
    other = ContentService(Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock)))
    async with other.lifespan():
        reader = await aiohttp_client(other.create_app())
        key = site["keys"]["all"]
        before = await _json(reader, "/content/post", key)
        assert before["meta"]["total"] == 2
        # Served from the other process's cache now.
        assert (await _json(reader, "/content/post", key)) == before
        version = other.content_version()
        await cms.patch(
            f"/api/entries/{site['draft']['id']}",
            json={"status": "published"},
            headers=team["editor"].headers,
        )
        for _ in range(500):
            if other.content_version() > version:
                break
            await asyncio.sleep(0.01)
        after = await _json(reader, "/content/post", key)
        assert after["meta"]["total"] == 3
        assert (await _json(reader, "/content/post/draft-post", key))["title"] == "Draft post"
