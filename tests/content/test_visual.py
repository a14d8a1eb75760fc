"""Visual editing through the example host (example_site/): real pages, public and editing.

The gateway is built as `make run` builds it in development: the CMS under
/cms with the example's visual definitions and website manifest, the site
under /site, its content seeded on startup.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from lxml import html as lxml_html

from common.settings import Settings
from content.visual.definitions import VisualConfigError, parse_definitions
from content.visual.render import render_visual

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
    return [a for el in doc.iter() if isinstance(el.tag, str) for a in el.attrib if a.startswith("data-visual-")]


async def entry_id(site: Any, headers: dict[str, str], type_name: str, slug: str) -> str:
    listed = await (await site.get(f"{CMS}/api/entries?type={type_name}&search={slug}", headers=headers)).json()
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
