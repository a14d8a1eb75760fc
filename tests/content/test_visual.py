"""Visual editing through the example host (example_site/): real pages, public and editing.

The gateway is built as `make run` builds it in development: the CMS under
/cms with the example's visual definitions and website manifest, the site
under /site, its content seeded on startup.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from aiohttp import web
from lxml import html as lxml_html

from common.db import execute as conn_execute
from common.db import fetch_val
from common.settings import Settings
from content import ContentService
from content.visual import service as visual_service
from content.visual.definitions import VisualConfigError, parse_definitions
from content.visual.options import HostVisual, report_visual_problems
from content.visual.render import Overlay, render_visual
from content.visual.website import parse_website
from example_site import OPTIONS, first_run
from example_site.seed import seed
from gateway.app import services_key

CMS = "/cms"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return dataclasses.replace(settings, app_env="development")


@pytest.fixture
async def site(gateway_client: Any) -> Any:
    return gateway_client


def sections(page: str) -> list[str]:
    doc = lxml_html.document_fromstring(page)
    return [s.get("id") for s in doc.cssselect("main > section")]


def marks(page: str) -> list[str]:
    doc = lxml_html.document_fromstring(page)
    return [
        a
        for el in doc.iter()
        if isinstance(el.tag, str)
        for a in el.attrib
        if a.startswith("data-visual-")
    ]


async def entry_id(site: Any, headers: dict[str, str], type_name: str, slug: str) -> str:
    listed = await (
        await site.get(f"{CMS}/api/entries?type={type_name}&search={slug}", headers=headers)
    ).json()
    return str(next(e["id"] for e in listed["data"] if e["slug"] == slug))


async def test_the_example_pages_come_from_delivery_arranged_by_their_layout(site, team) -> None:
    home = await site.get("/site/")
    assert home.status == 200, await home.text()
    page = await home.text()
    assert sections(page) == ["hero", "features", "story", "contact"]
    assert marks(page) == []
    assert home.headers["Cache-Control"] == "public, no-cache"
    assert "Set-Cookie" not in home.headers
    doc = lxml_html.document_fromstring(page)
    assert doc.cssselect("#hero h1")[0].text == "Welcome"  # $title
    intro = doc.cssselect("#hero .intro")[0]
    assert [c.tag for c in intro] == ["i", "br"]
    assert doc.cssselect("#story .author")[0].text == "Ada Lovelace"  # the referenced slug
    assert [a.get("href") for a in doc.cssselect("#main-nav a")] == ["/site/", "/site/about"]
    about = await (await site.get("/site/about")).text()
    # order: story, contact; features hidden; the hero does not move.
    assert sections(about) == ["hero", "story", "contact"]
    assert (await site.get("/site/nope")).status == 404


async def preview_url(site: Any, headers: dict[str, str], entry: str, **body: Any) -> str:
    resp = await site.post(f"{CMS}/api/entries/{entry}/preview", json=body, headers=headers)
    assert resp.status == 201, await resp.text()
    link = await resp.json()
    assert link["siteUrl"].startswith("/site/")
    return str(link["siteUrl"])


async def test_editing_mode_only_in_a_valid_preview_carrying_visual_1(site, team, settings):
    editor = team["editor"].headers
    about = await entry_id(site, editor, "page", "about")
    url = await preview_url(
        site,
        editor,
        about,
        title="About us",
        data={"__layout": {"order": ["contact", "story"], "hidden": ["features"]}},
    )
    editing = await site.get(url + "&visual=1")
    assert editing.status == 200
    page = await editing.text()
    doc = lxml_html.document_fromstring(page)
    # Unsaved changes for this request only: the title and the order.
    assert doc.cssselect("#hero h1")[0].text == "About us"
    assert sections(page) == ["hero", "contact", "story", "features"]
    hero = doc.cssselect("#hero")[0]
    assert hero.get("data-visual-section") == "hero" and hero.get("data-visual-movable") == "false"
    assert hero.get("data-visual-fields") == "$title intro"
    hidden = doc.cssselect("#features")[0]
    assert hidden.get("data-visual-hidden") == "true"  # kept, and marked, for the editor
    assert hidden.get("data-visual-collection") == "feature"
    assert doc.cssselect("#hero h1")[0].get("data-visual-field") == "$title"
    intro = doc.cssselect("#hero .intro")[0]
    assert (
        intro.get("data-visual-field") == "intro" and intro.get("data-visual-formatted") == "true"
    )
    author = doc.cssselect("#story .author")[0]
    assert author.get("data-visual-reference") == "person"
    for answer in (editing, await site.get(url)):
        assert answer.headers["Cache-Control"] == "no-store"
        assert answer.headers["X-Robots-Tag"] == "noindex, nofollow"
        assert "Set-Cookie" not in answer.headers
        csp = answer.headers["Content-Security-Policy"]
        assert f"frame-ancestors 'self' {settings.public_origin}" in csp

    # The same preview without visual=1: the page as visitors would see it.
    plain = await (await site.get(url)).text()
    assert marks(plain) == [] and sections(plain) == ["hero", "contact", "story"]
    # visual=1 without a valid token: the public page, no editing attributes.
    forged = await site.get("/site/about?preview=not-a-token&visual=1")
    assert forged.status == 200 and marks(await forged.text()) == []
    assert forged.headers["Cache-Control"] == "no-store"
    public = await site.get("/site/about?visual=1")
    assert marks(await public.text()) == [] and "X-Robots-Tag" not in public.headers


async def test_a_layout_naming_an_unknown_section_is_refused_on_save_and_preview(site, team):
    editor = team["editor"].headers
    home = await entry_id(site, editor, "page", "home")
    layout = {"order": ["story", "sidebar"], "hidden": ["footer"]}
    for path in (f"/api/entries/{home}", f"/api/entries/{home}/preview"):
        method = site.patch if path.endswith(home) else site.post
        resp = await method(CMS + path, json={"data": {"__layout": layout}}, headers=editor)
        assert resp.status == 400
        body = await resp.json()
        assert body["code"] == "VALIDATION_FAILED"
        keys = [f["key"] for f in body["details"]["fields"]]
        assert keys == ["__layout.order.1", "__layout.hidden.0"]
        assert "'sidebar'" in body["details"]["fields"][0]["message"]
    created = await site.post(
        f"{CMS}/api/entries",
        json={"type": "page", "title": "New", "data": {"__layout": {"order": ["nope"]}}},
        headers=editor,
    )
    assert created.status == 400
    saved = await site.patch(
        f"{CMS}/api/entries/{home}",
        json={"data": {"__layout": {"order": ["contact"], "hidden": ["story"]}}},
        headers=editor,
    )
    assert saved.status == 200
    page = await (await site.get("/site/")).text()
    assert sections(page) == ["hero", "contact", "features"]  # the hero stays first


async def test_formatted_fields_keep_text_i_and_br_and_references_store_a_live_slug(site, team):
    editor = team["editor"].headers
    home = await entry_id(site, editor, "page", "home")
    url = f"{CMS}/api/entries/{home}"
    dirty = 'Bold <b>move</b> <i class="x" onclick="x()">here</i><br><script>alert(1)</script>'
    saved = await site.patch(url, json={"data": {"intro": dirty}}, headers=editor)
    assert saved.status == 200
    assert (await saved.json())["data"]["intro"] == "Bold move <i>here</i><br>"
    wrong = await site.patch(url, json={"data": {"author": "nobody"}}, headers=editor)
    assert wrong.status == 400
    assert (await wrong.json())["details"]["fields"][0]["key"] == "author"
    feature = await site.patch(url, json={"data": {"author": "fast"}}, headers=editor)
    assert feature.status == 400  # a feature's slug, not a person's


def test_a_wrong_definition_stops_the_start_naming_each_problem() -> None:
    with pytest.raises(VisualConfigError) as caught:
        parse_definitions(
            {
                "page": {
                    "sections": [
                        {"id": "a", "label": "A", "selector": "#a[", "fields": ["title"]},
                        {"id": "a", "label": "A2", "selector": "#b", "fields": []},
                    ],
                    "fields": {"$title": "h1", "intro": "p::oops("},
                    "formatted": ["missing"],
                    "colour": "red",
                }
            }
        )
    text = str(caught.value)
    for where in (
        "visual.page.sections.0.selector is not a valid CSS selector",
        "visual.page.sections.0.fields.0 names 'title'",
        "visual.page.sections.1.id repeats the section id 'a'",
        "visual.page.fields.intro is not a valid CSS selector",
        "visual.page.formatted.0 names 'missing'",
        "visual.page.colour is not a known key",
    ):
        assert where in text, text


def test_render_visual_moves_only_movable_siblings_and_keeps_the_text_between() -> None:
    definition = {
        "sections": [
            {"id": "a", "label": "A", "selector": "#a", "fields": []},
            {"id": "b", "label": "B", "selector": "#b", "fields": [], "movable": False},
            {"id": "c", "label": "C", "selector": "#c", "fields": []},
        ],
        "fields": {},
    }
    page = '<div id="a">A</div>, <div id="b">B</div>; <div id="c">C</div>.'
    out = render_visual(page, definition, {"order": ["c", "b", "a"]})
    assert out == '<div id="c">C</div>, <div id="b">B</div>; <div id="a">A</div>.'
    assert (
        render_visual(page, definition, {"hidden": ["b"]})
        == '<div id="a">A</div>, ; <div id="c">C</div>.'
    )
    # The public page carries no selection attributes, even ones the template wrote.
    marked = '<div id="a" data-visual-section="x">A</div>'
    assert render_visual(marked, definition, None) == '<div id="a">A</div>'


def test_editing_mode_links_the_admins_overlay_and_the_public_page_never_does() -> None:
    definition = {
        "sections": [{"id": "a", "label": "A", "selector": "#a", "fields": []}],
        "fields": {},
    }
    page = "<!doctype html><html><head><title>t</title></head><body><p id=a>A</p></body></html>"
    overlay = Overlay("https://cms.example/admin/assets/o.js", "https://cms.example/o.css")
    doc = lxml_html.document_fromstring(render_visual(page, definition, None, True, overlay))
    head = doc.find("head")
    assert [(e.tag, e.get("src") or e.get("href")) for e in head[1:]] == [
        ("link", "https://cms.example/o.css"),
        ("script", "https://cms.example/admin/assets/o.js"),
    ]
    assert head[2].get("defer") is not None and head[2].get("type") is None  # classic
    public = render_visual(page, definition, None, False, overlay)
    assert "o.js" not in public and "o.css" not in public


async def test_the_visual_definitions_are_read_with_content_read(site, team) -> None:
    assert (await site.get(f"{CMS}/api/visual")).status == 401
    answer = await site.get(f"{CMS}/api/visual", headers=team["viewer"].headers)
    assert answer.status == 200
    (page,) = (await answer.json())["data"]
    assert page["type"] == "page"
    assert [(s["id"], s["movable"]) for s in page["sections"]] == [
        ("hero", False),
        ("features", True),
        ("story", True),
        ("contact", True),
    ]
    assert page["sections"][1]["collection"] == {"type": "feature", "label": "Features"}
    assert page["sections"][0]["fields"] == ["$title", "intro"]
    fields = {f["key"]: f for f in page["fields"]}
    assert fields["intro"]["formatted"] is True and fields["intro"]["reference"] is None
    assert fields["author"]["reference"] == {"type": "person", "label": "Author"}
    assert "selector" not in page["sections"][0]  # selectors stay with the host


def content_version(site: Any) -> int:
    return int(site.app[services_key]["content"].content_version())


async def test_website_parts_round_trip_through_the_ordinary_routes_with_their_permissions(
    site, team
) -> None:
    viewer, editor, admin = (team[r].headers for r in ("viewer", "editor", "admin"))
    assert (await site.get(f"{CMS}/api/website")).status == 401
    website = await (await site.get(f"{CMS}/api/website", headers=viewer)).json()
    assert website["previewUrl"] == "/site/"
    parts = {p["id"]: p for p in website["parts"]}
    nav = parts["navigation"]
    assert nav["selector"] == "#main-nav" and nav["source"]["kind"] == "menu"
    assert nav["value"] == {
        "exists": False,
        "label": "Main menu",
        "items": [{"label": "Home", "url": "/site/"}, {"label": "About", "url": "/site/about"}],
    }
    assert parts["identity"]["value"] == {
        "title": "Example site",
        "tagline": "Pages from the content service",
    }
    footer = parts["footer"]["value"]
    assert footer["entry"]["status"] == "published"
    assert footer["fields"] == {"text": "Made with the content service."}

    # The menu: a viewer cannot save it; an editor's first save creates it.
    items = [*nav["value"]["items"], {"label": "Blog", "url": "https://blog.example.com/"}]
    body = {"label": "Main menu", "items": items}
    assert (await site.put(f"{CMS}/api/menus/main", json=body, headers=viewer)).status == 403
    version = content_version(site)
    created = await site.put(f"{CMS}/api/menus/main", json=body, headers=editor)
    assert created.status == 201
    assert content_version(site) > version
    page = lxml_html.document_fromstring(await (await site.get("/site/")).text())
    assert [a.text for a in page.cssselect("#main-nav a")] == ["Home", "About", "Blog"]

    # Settings: admins only (settings.manage), only the changed field.
    change = {"tagline": "Now edited in place"}
    assert (await site.patch(f"{CMS}/api/settings", json=change, headers=editor)).status == 403
    assert (await site.patch(f"{CMS}/api/settings", json=change, headers=admin)).status == 200

    # The footer: a shared entry draft stays a draft when its fields are saved.
    footer_id = footer["entry"]["id"]
    url = f"{CMS}/api/entries/{footer_id}"
    assert (await site.patch(url, json={"status": "draft"}, headers=editor)).status == 200
    text = {"data": {"text": "Draft words"}}
    assert (await site.patch(url, json=text, headers=viewer)).status == 403
    saved = await site.patch(url, json=text, headers=editor)
    assert saved.status == 200 and (await saved.json())["status"] == "draft"
    public = lxml_html.document_fromstring(await (await site.get("/site/")).text())
    assert public.cssselect("#site-footer p")[0].text is None  # a draft is not delivered
    assert "Now edited in place" in public.cssselect(".tagline")[0].text

    after = await (await site.get(f"{CMS}/api/website", headers=viewer)).json()
    values = {p["id"]: p["value"] for p in after["parts"]}
    assert values["navigation"]["exists"] is True and len(values["navigation"]["items"]) == 3
    assert values["identity"]["tagline"] == "Now edited in place"
    assert values["footer"]["entry"]["status"] == "draft"
    assert values["footer"]["fields"] == {"text": "Draft words"}
    activity = await (await site.get(f"{CMS}/api/activity", headers=admin)).json()
    actions = [a["action"] for a in activity["data"][:5]]
    assert actions[:4] == ["entry.updated", "entry.drafted", "settings.updated", "menu.created"]
    revisions = await (await site.get(f"{url}/revisions", headers=viewer)).json()
    assert revisions["data"][0]["data"]["text"] == "Draft words"


async def test_the_flat_menu_editor_keeps_nested_items_and_entry_links_resolve_for_the_site(
    site, team
) -> None:
    editor, viewer = team["editor"].headers, team["viewer"].headers
    about = await entry_id(site, editor, "page", "about")
    draft = await site.post(
        f"{CMS}/api/entries", json={"type": "page", "title": "Soon"}, headers=editor
    )
    items = [
        {"label": "Home", "url": "/site/"},
        {
            "label": "More",
            "url": "/site/about",
            "children": [
                {"label": "About us", "entryId": about},
                {"label": "Soon", "entryId": (await draft.json())["id"]},
            ],
        },
    ]
    assert (
        await site.put(f"{CMS}/api/menus/main", json={"items": items}, headers=editor)
    ).status == 201
    website = await (await site.get(f"{CMS}/api/website", headers=viewer)).json()
    nav = website["parts"][0]["value"]
    assert nav["nested"] is True and nav["items"] == items
    # The flat editor changes a top-level label and sends the items back as it got them.
    nav["items"][0]["label"] = "Start"
    saved = await site.put(f"{CMS}/api/menus/main", json={"items": nav["items"]}, headers=editor)
    assert saved.status == 200
    assert (await saved.json())["items"][1]["children"] == items[1]["children"]
    page = lxml_html.document_fromstring(await (await site.get("/site/")).text())
    # The site's menu is delivered resolved: entry links by the page type's
    # preview address, the draft left out; only the top level is shown here.
    assert [a.text for a in page.cssselect("#main-nav a")] == ["Start", "More"]
    menu = await site.app[services_key]["content"].reader().menu("main")
    assert menu is not None
    children = menu["items"][1]["children"]
    assert [(c["label"], c["url"]) for c in children] == [("About us", "/site/about")]


async def test_definitions_that_disagree_with_the_stored_types_are_reported_at_start(
    site, caplog
) -> None:
    """The example's own definitions match its seeded types; a wrong one is named."""
    content = site.app[services_key]["content"]
    async with content.context.db.connection() as conn:
        assert await report_visual_problems(conn, content.visual) == []
        wrong = HostVisual(
            parse_definitions(
                {
                    "page": {"fields": {"subtitle": "h2", "author": "p"}, "references": {}},
                    "post": {"fields": {}},
                }
            ),
            parse_website(
                {
                    "previewUrl": "/",
                    "parts": [_part({"kind": "entry", "type": "page", "fields": []})],
                }
            ),
        )
        problems = await report_visual_problems(conn, wrong)
    assert problems == [
        "visual.page.fields.subtitle: the type has no field 'subtitle'",
        "visual.post: no content type 'post' exists",
        "website part 'x': 'page' is not a single-kind content type",
    ]
    assert "visual editing: visual.post: no content type 'post' exists" in caplog.text


def _part(source: dict[str, Any]) -> dict[str, Any]:
    return {"id": "x", "label": "X", "selector": "#x", "source": source}


def test_a_wrong_website_manifest_stops_the_start_naming_each_problem() -> None:
    with pytest.raises(VisualConfigError) as caught:
        parse_website(
            {
                "previewUrl": "site",
                "parts": [
                    _part(
                        {
                            "kind": "menu",
                            "name": "Main!",
                            "defaults": [{"label": "x", "url": "javascript:alert(1)"}],
                        }
                    ),
                    _part({"kind": "settings", "fields": ["colour"]}),
                    {**_part({"kind": "feed"}), "selector": "#x["},
                ],
            }
        )
    text = str(caught.value)
    for where in (
        "website.previewUrl must be the path",
        "website.parts.0.source.name must be a menu name",
        "website.parts.0.source.defaults.0.url javascript: links are not allowed",
        "website.parts.1.id repeats the part id 'x'",
        "website.parts.1.source.fields.0 must be one of title",
        "website.parts.2.selector is not a valid CSS selector",
        "website.parts.2.source.kind must be menu, entry or settings",
    ):
        assert where in text, text


async def test_the_seed_runs_once_and_only_in_development(site, runtime) -> None:
    content = site.app[services_key]["content"]
    assert await seed(content.context) is False  # the first start made it already
    production_like = ContentService(
        dataclasses.replace(
            runtime, settings=dataclasses.replace(runtime.settings, app_env="test")
        ),
        OPTIONS,
    )
    async with runtime.db.connection() as conn:
        await conn_execute(conn, "DELETE FROM content.entries")
        await conn_execute(conn, "DELETE FROM content.content_types")
    async for _ in first_run(production_like)(web.Application()):
        pass
    async with runtime.db.connection() as conn:
        assert await fetch_val(conn, "SELECT count(*) FROM content.content_types") == 0


async def test_the_visual_editor_may_frame_the_origin_of_an_absolute_preview_address(
    site, team
) -> None:
    owner = team["admin"].headers
    answer = await site.patch(
        f"{CMS}/api/types/page",
        json={"previewUrl": "https://www.example.org/pages/{slug}"},
        headers=owner,
    )
    assert answer.status == 200, await answer.text()
    ctx = site.app[services_key]["content"].context
    assert await visual_service.preview_origins(ctx) == ["https://www.example.org"]
