"""Menus under /api/menus, and the resolution menu delivery calls (menus/resolution.py)."""

from __future__ import annotations

import pytest

from content.menus.resolution import resolve_menu
from content.service import CONTENT_VERSION
from tests.content.factories import make_type

NAV = [
    {"label": "Home", "url": "/"},
    {
        "label": "Contact",
        "url": "mailto:hello@example.com",
        "children": [{"label": "Call", "url": "tel:+441234567"}],
    },
    {"label": "Docs", "url": "https://docs.example.com/start?x=1#top"},
]


@pytest.fixture
async def types(runtime, clock):
    await make_type(
        runtime.db, clock, "page", [], preview_url="https://site.example/{locale}/{slug}"
    )
    await make_type(runtime.db, clock, "product", [], preview_url="/shop/{slug}")


async def _entry(cms, who, type_name, title, status="published"):
    resp = await cms.post(
        "/api/entries",
        json={"type": type_name, "title": title, "status": status},
        headers=who.headers,
    )
    assert resp.status == 201, await resp.text()
    return await resp.json()


async def test_menu_crud_returns_the_tree_as_saved(cms, team):
    editor = team["editor"].headers
    for role in ("viewer", "author"):
        resp = await cms.post(
            "/api/menus", json={"name": "main", "items": NAV}, headers=team[role].headers
        )
        assert resp.status == 403
        assert (await resp.json())["code"] == "FORBIDDEN"
    created = await cms.post("/api/menus", json={"name": "main", "items": NAV}, headers=editor)
    assert created.status == 201
    menu = await created.json()
    assert menu["name"] == "main" and menu["label"] == "main" and menu["items"] == NAV
    dup = await cms.post("/api/menus", json={"name": "main"}, headers=editor)
    assert dup.status == 409
    assert (await dup.json())["details"]["fields"] == [
        {"key": "name", "message": "is already in use"}
    ]
    got = await (await cms.get("/api/menus/main", headers=team["viewer"].headers)).json()
    assert got["items"] == NAV
    listed = await (await cms.get("/api/menus", headers=team["viewer"].headers)).json()
    assert [m["name"] for m in listed["data"]] == ["main"]
    replaced = await cms.put(
        "/api/menus/main", json={"label": "Main", "items": NAV[:1]}, headers=editor
    )
    assert replaced.status == 200
    assert (await replaced.json())["items"] == NAV[:1]
    # PUT on a missing menu creates it (the shared menu editor saves this way).
    footer = await cms.put("/api/menus/footer", json={"items": []}, headers=editor)
    assert footer.status == 201
    assert (
        await cms.put("/api/menus/footer", json={"items": []}, headers=team["author"].headers)
    ).status == 403
    assert (await cms.delete("/api/menus/footer", headers=team["author"].headers)).status == 403
    assert (await cms.delete("/api/menus/footer", headers=editor)).status == 204
    assert (await cms.get("/api/menus/footer", headers=editor)).status == 404
    activity = await (
        await cms.get("/api/activity?subjectKind=menu", headers=team["viewer"].headers)
    ).json()
    assert [(a["action"], a["subject"]["id"]) for a in activity["data"]] == [
        ("menu.deleted", "footer"),
        ("menu.created", "footer"),
        ("menu.updated", "main"),
        ("menu.created", "main"),
    ]


async def test_menu_items_are_validated_naming_each_bad_item(cms, team):
    items = [
        {"label": "XSS", "url": "javascript:alert(1)"},
        {"label": "Tabbed", "url": "java\tscript:alert(1)"},
        {"label": "Data", "url": "data:text/html,<b>x</b>"},
        {"label": "", "url": "/ok"},
        {"label": "Both", "url": "/a", "entryId": "x"},
        {"label": "Neither"},
        {"label": "Ghost", "entryId": "no-such-entry"},
        {"label": "Odd", "url": "/x", "target": "_blank"},
        {
            "label": "Deep",
            "url": "/1",
            "children": [
                {
                    "label": "2",
                    "url": "/2",
                    "children": [
                        {
                            "label": "3",
                            "url": "/3",
                            "children": [
                                {
                                    "label": "4",
                                    "url": "/4",
                                    "children": [{"label": "5", "url": "/5"}],
                                }
                            ],
                        }
                    ],
                }
            ],
        },
    ]
    resp = await cms.post(
        "/api/menus", json={"name": "Bad Name", "items": items}, headers=team["editor"].headers
    )
    assert resp.status == 400
    error = await resp.json()
    assert error["code"] == "VALIDATION_FAILED"
    keys = {f["key"] for f in error["details"]["fields"]}
    assert keys == {
        "name",
        "items.0.url",
        "items.1.url",
        "items.2.url",
        "items.3.label",
        "items.4",
        "items.5",
        "items.6.entryId",
        "items.7.target",
        "items.8.children.0.children.0.children.0.children",
    }
    too_many = [{"label": str(i), "url": f"/{i}"} for i in range(201)]
    resp = await cms.put("/api/menus/big", json={"items": too_many}, headers=team["editor"].headers)
    assert resp.status == 400
    assert (await cms.get("/api/menus", headers=team["editor"].headers)).status == 200


async def test_menu_changes_move_the_content_version(cms, team):
    editor = team["editor"].headers
    version = cms.app[CONTENT_VERSION]()
    await cms.post("/api/menus", json={"name": "main", "items": NAV}, headers=editor)
    await cms.put("/api/menus/main", json={"items": []}, headers=editor)
    await cms.delete("/api/menus/main", headers=editor)
    assert cms.app[CONTENT_VERSION]() == version + 3
    await cms.put(
        "/api/menus/main", json={"items": [{"label": "x", "url": "javascript:x"}]}, headers=editor
    )
    assert cms.app[CONTENT_VERSION]() == version + 3


async def test_resolution_keeps_published_in_scope_entries_and_address_links(
    cms, team, runtime, types
):
    editor = team["editor"]
    about = await _entry(cms, editor, "page", "About us")
    draft = await _entry(cms, editor, "page", "Coming soon", status="draft")
    trashed = await _entry(cms, editor, "page", "Old page")
    shop = await _entry(cms, editor, "product", "Chair")
    team_page = await _entry(cms, editor, "page", "Team")
    items = [
        {"label": "Home", "url": "/"},
        {"label": "About", "entryId": about["id"]},
        # A draft parent is left out; its published child takes its place.
        {
            "label": "Soon",
            "entryId": draft["id"],
            "children": [
                {"label": "Team", "entryId": team_page["id"]},
            ],
        },
        {"label": "Old", "entryId": trashed["id"]},
        {
            "label": "Chair",
            "entryId": shop["id"],
            "children": [{"label": "Mail", "url": "mailto:a@b.example"}],
        },
    ]
    saved = await cms.put("/api/menus/main", json={"items": items}, headers=editor.headers)
    assert saved.status == 201
    await cms.delete(f"/api/entries/{trashed['id']}", headers=editor.headers)
    # The admin still reads the tree as saved, trashed destination included.
    assert (await (await cms.get("/api/menus/main", headers=editor.headers)).json())[
        "items"
    ] == items

    async with runtime.db.connection() as conn:
        pages_only = await resolve_menu(conn, items, ["page"])
        everything = await resolve_menu(conn, items, ["*"])
    assert pages_only == [
        {"label": "Home", "url": "/", "children": []},
        {
            "label": "About",
            "url": "https://site.example/en/about-us",
            "entryId": about["id"],
            "children": [],
        },
        {
            "label": "Team",
            "url": "https://site.example/en/team",
            "entryId": team_page["id"],
            "children": [],
        },
        # The out-of-scope product is left out; its plain child link stays.
        {"label": "Mail", "url": "mailto:a@b.example", "children": []},
    ]
    assert everything[-1] == {
        "label": "Chair",
        "url": "/shop/chair",
        "entryId": shop["id"],
        "children": [{"label": "Mail", "url": "mailto:a@b.example", "children": []}],
    }
    assert [i["label"] for i in everything] == ["Home", "About", "Team", "Chair"]
