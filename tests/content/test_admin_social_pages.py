"""The social screens' page shells: one Social section for authors and up, the
composer's post id handed to its module, and nothing of it for a viewer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from common.bundles import BUNDLES
from content.auth.credentials import SESSION_COOKIE
from tests.content.factories import Person

SCREENS = ("social", "social-posts", "social-post", "social-calendar", "social-settings", "account")


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in build of the admin's bundles (these tests need no node)."""
    dist = tmp_path / "dist"
    (dist / "cms").mkdir(parents=True)
    files = {"cms/admin-AAAA.css": "body{}"}
    entries = {"cms/admin.css": "cms/admin-AAAA.css"}
    for screen in ("entries", *SCREENS):
        files[f"cms/{screen}-CCCC.js"] = "export{};"
        entries[f"cms/{screen}.js"] = f"cms/{screen}-CCCC.js"
    for name, body in files.items():
        (dist / name).write_text(body)
    (dist / "manifest.json").write_text(json.dumps({"entries": entries, "files": sorted(files)}))
    monkeypatch.setattr(BUNDLES, "dist", dist)
    monkeypatch.setattr(BUNDLES, "_stamp", -1.0)
    return dist


async def page(cms: Any, who: Person, path: str) -> tuple[int, str]:
    response = await cms.get(path, headers={"Cookie": f"{SESSION_COOKIE}={who.token}"})
    return response.status, (await response.text()).replace("&#34;", '"')


async def test_an_author_has_the_social_section_and_the_composer_its_post(
    cms: Any, built: Path, team: dict[str, Person]
) -> None:
    status, html = await page(cms, team["author"], "/admin/social/posts/sp_abc123")
    assert status == 200
    assert 'src="/admin/assets/cms/social-post-CCCC.js"' in html
    assert 'data-post="sp_abc123"' in html
    assert '<a href="/admin/social" aria-current="location">Social</a>' in html
    status, html = await page(cms, team["author"], "/admin/social/posts/new")
    assert (status, 'data-post=""' in html) == (200, True)
    for path, screen in (
        ("/admin/social", "social"),
        ("/admin/social/posts", "social-posts"),
        ("/admin/social/calendar", "social-calendar"),
        ("/admin/social/settings", "social-settings"),
        ("/admin/account", "account"),
    ):
        status, html = await page(cms, team["author"], path)
        assert status == 200 and f"cms/{screen}-CCCC.js" in html, path


async def test_a_viewer_has_no_social_section(
    cms: Any, built: Path, team: dict[str, Person]
) -> None:
    status, html = await page(cms, team["viewer"], "/admin/entries")
    assert status == 200
    assert 'href="/admin/social"' not in html
    assert 'href="/admin/account"' in html  # everyone has their own account
