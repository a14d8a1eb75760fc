"""The admin's page shells (content/admin): who is sent where, their headers, the bundles' route."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from common.bundles import BUNDLES, Bundles
from content.admin.security import safe_next


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in build (what `make assets` writes), so these tests need no node."""
    dist = tmp_path / "dist"
    (dist / "cms").mkdir(parents=True)
    files = {"cms/admin-AAAA.css": "body{}", "cms/entries-BBBB.js": "export{};"}
    entries = {"cms/admin.css": "cms/admin-AAAA.css", "cms/entries.js": "cms/entries-BBBB.js"}
    for screen in ("setup", "signin", "types", "entry", "trash"):
        files[f"cms/{screen}-CCCC.js"] = "export{};"
        entries[f"cms/{screen}.js"] = f"cms/{screen}-CCCC.js"
    for name, body in files.items():
        (dist / name).write_text(body)
    (dist / "manifest.json").write_text(json.dumps({"entries": entries, "files": sorted(files)}))
    monkeypatch.setattr(BUNDLES, "dist", dist)
    # Every cached field, so the real build's cache comes back whole afterwards
    # (restoring only the stamp would keep this stand-in's entries).
    monkeypatch.setattr(BUNDLES, "_stamp", -1.0)
    monkeypatch.setattr(BUNDLES, "_entries", {})
    monkeypatch.setattr(BUNDLES, "_files", frozenset())
    return dist


async def claim(cms: Any) -> None:
    response = await cms.post(
        "/api/auth/setup",
        json={"email": "o@example.com", "password": "correct horse", "mode": "cookie"},
    )
    assert response.status == 201


async def test_a_fresh_site_sends_every_page_to_the_claim(cms: Any, built: Path) -> None:
    response = await cms.get("/admin/entries", allow_redirects=False)
    assert (response.status, response.headers["Location"]) == (303, "/admin/setup")
    page = await cms.get("/admin/setup")
    assert page.status == 200
    csp = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "style-src 'self'" in csp and "unsafe" not in csp
    assert page.headers["Cache-Control"] == "no-store"
    html = await page.text()
    assert 'src="/admin/assets/cms/setup-CCCC.js"' in html
    assert 'href="/admin/assets/cms/admin-AAAA.css"' in html
    assert "<script>" not in html and "style=" not in html


async def test_once_claimed_pages_need_a_session_and_come_back(cms: Any, built: Path) -> None:
    await claim(cms)  # the client keeps the cookie: signed in
    page = await cms.get("/admin/entries")
    assert page.status == 200
    assert '"role": "owner"' in (await page.text()).replace("&#34;", '"')
    assert (await cms.get("/admin/setup", allow_redirects=False)).headers["Location"] == (
        "/admin/signin"
    )
    cms.session.cookie_jar.clear()
    away = await cms.get("/admin/entries?type=post", allow_redirects=False)
    location = urlsplit(away.headers["Location"])
    assert location.path == "/admin/signin"
    assert parse_qs(location.query) == {"next": ["/admin/entries?type=post"]}
    signin = await cms.get("/admin/signin?next=/admin/trash")
    assert 'data-next="/admin/trash"' in await signin.text()


def test_after_sign_in_only_admin_paths_are_followed() -> None:
    assert safe_next("/admin/entries?x=1", "/admin") == "/admin/entries?x=1"
    for raw in ("https://evil.example/admin", "//evil.example", "/admin//evil", "/other", None):
        assert safe_next(raw, "/admin") == "/admin"
    assert safe_next("/admin\\evil", "/admin") == "/admin"


async def test_bundles_are_immutable_and_only_what_the_build_made(cms: Any, built: Path) -> None:
    found = await cms.get("/admin/assets/cms/entries-BBBB.js")
    assert found.status == 200
    assert found.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    assert found.headers["Content-Type"].startswith("text/javascript")
    assert found.headers["Vary"] == "Accept-Encoding"
    assert (await cms.get("/admin/assets/manifest.json")).status == 404
    assert (await cms.get("/admin/assets/cms/entries.js")).status == 404


async def test_without_a_build_the_pages_say_to_run_make_assets(
    cms: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(BUNDLES, "dist", tmp_path / "nothing")
    monkeypatch.setattr(BUNDLES, "_stamp", -1.0)
    page = await cms.get("/admin/setup")
    assert page.status == 503
    assert "make assets" in await page.text()


def test_a_rebuild_is_picked_up_without_a_restart(built: Path) -> None:
    bundles = Bundles(built)
    assert bundles.file_of("cms/entries.js") == "cms/entries-BBBB.js"
    manifest = json.loads((built / "manifest.json").read_text())
    manifest["entries"]["cms/entries.js"] = "cms/entries-DDDD.js"
    (built / "manifest.json").write_text(json.dumps(manifest))
    stat = (built / "manifest.json").stat()
    os.utime(built / "manifest.json", (stat.st_atime, stat.st_mtime + 5))
    assert bundles.file_of("cms/entries.js") == "cms/entries-DDDD.js"


async def test_a_compressed_copy_goes_to_a_browser_that_takes_it(cms: Any, built: Path) -> None:
    (built / "cms/entries-BBBB.js.gz").write_bytes(gzip.compress(b"export{};"))
    taken = await cms.get("/admin/assets/cms/entries-BBBB.js", headers={"Accept-Encoding": "gzip"})
    assert taken.headers["Content-Encoding"] == "gzip"
    assert await taken.read() == b"export{};"
    plain = await cms.get(
        "/admin/assets/cms/entries-BBBB.js", headers={"Accept-Encoding": "identity"}
    )
    assert "Content-Encoding" not in plain.headers
