"""The CMS admin's visual preview, website parts, plugins and design screens (Chromium).

One development gateway for the module, as `make run` serves it: the example
host under /site with its seed, the owner from BOOTSTRAP_*, and the sample
plugins of tests/content/plugin_dir (gallery declares settings and a design
surface; broken fails to load). The preview is the host's page in the admin's
sandboxed frame; every change is saved through the entry routes and shows on
the public page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.cms import OWNER, PASSWORD, Cms, build_bundles, cms_gateway, signed_in
from tests.browser.conftest import Screens
from tests.conftest import ROOT, GatewayProcess, _fresh_database

PLUGIN_DIR = ROOT / "tests" / "content" / "plugin_dir"
FRAME = "iframe.visual-frame"


@pytest.fixture(scope="module")
def module_gateway(
    pg_admin_dsn: str, template_db: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GatewayProcess]:
    build_bundles()
    for url in _fresh_database(pg_admin_dsn, template_db):
        gateway = cms_gateway(
            tmp_path_factory.mktemp("cms-visual"),
            url,
            APP_ENV="development",
            BOOTSTRAP_EMAIL=OWNER,
            BOOTSTRAP_PASSWORD=PASSWORD,
            PLUGIN_DIR=str(PLUGIN_DIR),
        )
        try:
            yield gateway
        finally:
            gateway.stop()


@pytest.fixture
def gateway(module_gateway: GatewayProcess) -> GatewayProcess:
    return module_gateway


def _page_id(cms: Cms, slug: str) -> str:
    pages = cms.call("GET", f"/entries?type=page&search={slug}")["data"]
    return str(next(e["id"] for e in pages if e["slug"] == slug))


def _public_sections(gateway: GatewayProcess, slug: str, tab: Screens) -> list[str]:
    """The section ids of the public page, in order, as a visitor's browser sees them."""
    page = tab.page.context.new_page()
    try:
        page.goto(f"{gateway.base_url}/site/{slug}")
        assert page.locator("[data-visual-section], [data-visual-field]").count() == 0
        return list(page.locator("main > section").evaluate_all("els => els.map(e => e.id)"))
    finally:
        page.close()


def _frame_order(tab: Screens) -> list[str]:
    frame = tab.page.frame_locator(FRAME)
    return list(
        frame.locator("[data-visual-section]").evaluate_all(
            "els => els.map(e => e.dataset.visualSection)"
        )
    )


def _sidebar_order(tab: Screens) -> list[str]:
    return list(
        tab.page.locator(".sections > li").evaluate_all("els => els.map(e => e.dataset.section)")
    )


def test_reorder_hide_and_edit_in_the_visual_preview_change_the_public_page(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    cms = Cms(gateway.base_url).sign_in(OWNER)
    home = _page_id(cms, "home")
    tab = signed_in(screens, OWNER, f"/cms/admin/visual?entry={home}")
    page = tab.page
    frame = page.frame_locator(FRAME)
    frame.locator('[data-visual-section="contact"]').wait_for()
    expect(page.locator("#frame-status")).to_have_text("The preview is up to date.")
    assert _sidebar_order(tab) == ["hero", "features", "story", "contact"]
    assert _public_sections(gateway, "", tab) == ["hero", "features", "story", "contact"]
    # The frame is sandboxed: scripts only, an opaque origin (no cookies, no forms, no top).
    assert page.locator(FRAME).get_attribute("sandbox") == "allow-scripts"
    tab.check("visual-editor")

    # Keyboard only: focus the contact section's handle, Alt+Up twice.
    handle = page.locator('[data-move="contact-handle"]')
    handle.focus()
    page.keyboard.press("Alt+ArrowUp")
    expect(page.locator('[data-move="contact-handle"]')).to_be_focused()
    # At once, before the first save's page is back: the last order wins.
    page.keyboard.press("Alt+ArrowUp")
    expect(page.locator("#announcer")).to_contain_text("Contact moved to position 1")
    expect(page.locator("#frame-status")).to_have_text("The preview is up to date.")
    frame.locator('[data-visual-section="contact"]').wait_for()
    assert _frame_order(tab) == ["hero", "contact", "features", "story"]
    assert _public_sections(gateway, "", tab) == ["hero", "contact", "features", "story"]
    # The pinned hero cannot move: it has no handle.
    assert page.locator('[data-move="hero-handle"]').count() == 0

    # Hide the features from the keyboard: Tab to the button, Enter.
    page.locator('[data-hide="features"]').focus()
    page.keyboard.press("Enter")
    expect(frame.locator('[data-visual-section="features"]')).to_have_attribute(
        "data-visual-hidden", "true"
    )
    expect(page.locator('[data-hide="features"]')).to_have_text("Show")
    assert _public_sections(gateway, "", tab) == ["hero", "contact", "story"]

    # Drag the story above the contact by its handle.
    page.locator('[data-move="story-handle"]').drag_to(page.locator('li[data-section="contact"]'))
    expect(page.locator("#announcer")).to_contain_text("Saved")
    expect(page.locator("#frame-status")).to_have_text("The preview is up to date.")
    assert _public_sections(gateway, "", tab) == ["hero", "story", "contact"]
    layout = cms.call("GET", f"/entries/{home}")["data"]["__layout"]
    assert layout["hidden"] == ["features"]

    # A click on a field in the page opens it in the side panel, focused. (A fresh
    # load first: Playwright's networkidle, which tab.check waits for, does not
    # come back after a frame's navigation in another process.)
    page.reload()
    expect(page.locator("#frame-status")).to_have_text("The preview is up to date.")
    frame.locator('[data-visual-field="cta"]').click()
    cta = page.get_by_label("cta", exact=True)
    expect(cta).to_be_focused()
    expect(frame.locator('[data-visual-field="cta"]')).to_have_attribute(
        "data-visual-selected", "field"
    )
    tab.check("visual-editor-field")
    cta.fill("Call us on Mondays")
    page.get_by_role("button", name="Save Contact").click()
    expect(frame.locator('[data-visual-field="cta"]')).to_have_text("Call us on Mondays")
    public = httpx.get(gateway.base_url + "/site/")
    assert "Call us on Mondays" in public.text

    # The title, through the hero's panel chosen from the list; a refusal is marked.
    page.get_by_role("button", name="Select Hero").click()
    title = page.get_by_label("Title", exact=True)
    title.fill("")
    page.get_by_role("button", name="Save Hero").click()
    expect(title).to_have_attribute("aria-invalid", "true")
    title.fill("Hello there")
    page.get_by_role("button", name="Save Hero").click()
    expect(frame.locator('[data-visual-field="$title"]')).to_have_text("Hello there")

    # The story's author is a reference: a search by title, stored as the slug.
    cms.call(
        "POST",
        "/entries",
        {"type": "person", "title": "Grace Hopper", "slug": "grace", "status": "published"},
        201,
    )
    page.get_by_role("button", name="Select Story").click()
    author = page.get_by_role("combobox", name="Author")
    expect(page.locator("#visual-panel .chips")).to_contain_text("Ada Lovelace")
    author.fill("Grace")
    matches = page.get_by_role("listbox", name="Author: matching entries").get_by_role("option")
    expect(matches).to_have_count(1)  # the search's answer, not the list shown on focus
    expect(matches).to_have_text("Grace Hopper · published")
    author.press("ArrowDown")
    author.press("Enter")
    page.get_by_role("button", name="Save Story").click()
    expect(frame.locator('[data-visual-field="author"]')).to_have_text("Grace Hopper")
    assert cms.call("GET", f"/entries/{home}")["data"]["author"] == "grace"

    # The footer is a shared part (a single-kind entry): a click opens its editor.
    frame.locator("#site-footer").click()
    expect(page.locator("#panel-heading")).to_have_text("Footer")
    footer_text = page.locator("#visual-panel").get_by_label("text", exact=True)
    expect(footer_text).to_be_focused()
    footer_text.fill("Edited from the preview.")
    page.get_by_role("button", name="Save Footer").click()
    expect(frame.locator("#site-footer")).to_contain_text("Edited from the preview.")
    # And from the keyboard: the list of shared parts.
    page.get_by_role("button", name="Edit Main menu").press("Enter")
    expect(page.locator("#panel-heading")).to_have_text("Main menu")


def test_the_framed_preview_is_private_and_the_public_page_runs_no_overlay(
    gateway: GatewayProcess,
) -> None:
    cms = Cms(gateway.base_url).sign_in(OWNER)
    about = _page_id(cms, "about")
    link = cms.call("POST", f"/entries/{about}/preview", {}, 201)
    preview = httpx.get(gateway.base_url + link["siteUrl"] + "&visual=1")
    assert preview.status_code == 200
    assert preview.headers["Cache-Control"] == "no-store"
    assert preview.headers["X-Robots-Tag"] == "noindex, nofollow"
    assert "set-cookie" not in preview.headers
    policy = preview.headers["Content-Security-Policy"]
    assert f"frame-ancestors 'self' {gateway.base_url}" in policy
    assert f"script-src 'self' {gateway.base_url}" in policy
    assert "/cms/admin/assets/cms/visual-overlay-" in preview.text
    public = httpx.get(gateway.base_url + "/site/about")
    assert public.headers["Cache-Control"] == "public, no-cache"
    assert "visual-overlay" not in public.text
    assert "script-src 'self';" in public.headers["Content-Security-Policy"]
    # A preview without visual=1 has no overlay either, and is still private.
    plain = httpx.get(gateway.base_url + link["siteUrl"])
    assert "visual-overlay" not in plain.text
    assert plain.headers["Cache-Control"] == "no-store"


def test_website_parts_menu_entry_and_settings(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    cms = Cms(gateway.base_url).sign_in(OWNER)
    tab = signed_in(screens, OWNER, "/cms/admin/website")
    page = tab.page
    menu = page.get_by_role("form", name="Main menu")
    expect(menu.get_by_text("This menu does not exist yet")).to_be_visible()
    tab.check("website-parts")
    # Move "About" up with the keyboard, rename it, save: the menu is created.
    about_handle = menu.get_by_role("button", name="Reorder About: drag, or Alt+Up and Alt+Down")
    about_handle.focus()
    page.keyboard.press("Alt+ArrowUp")
    menu.get_by_label("Label").first.fill("Who we are")
    menu.get_by_role("button", name="Save Main menu").click()
    expect(menu.get_by_role("status")).to_have_text("Created and saved.")
    saved = cms.call("GET", "/menus/main")
    assert [i["label"] for i in saved["items"]] == ["Who we are", "Home"]
    # The footer's text (a single-kind entry) and the site name (settings).
    footer = page.get_by_role("form", name="Footer")
    footer.get_by_label("text").fill("Hand made.")
    footer.get_by_role("button", name="Save Footer").click()
    expect(footer.get_by_role("status")).to_have_text("Saved.")
    identity = page.get_by_role("form", name="Site name")
    identity.get_by_label("Tagline").fill("Fresh words")
    identity.get_by_role("button", name="Save Site name").click()
    expect(identity.get_by_role("status")).to_have_text("Saved.")
    public = httpx.get(gateway.base_url + "/site/").text
    assert "Hand made." in public and "Fresh words" in public and "Who we are" in public


def test_plugins_enable_and_settings_then_a_design_override_changed_and_removed(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    cms = Cms(gateway.base_url).sign_in(OWNER)
    tab = signed_in(screens, OWNER, "/cms/admin/plugins")
    page = tab.page
    gallery = page.locator('section[data-plugin="gallery"]')
    expect(page.locator('section[data-plugin="broken"]')).to_contain_text("Failed to load")
    page.get_by_role("button", name="Enable Gallery").click()
    expect(gallery).to_contain_text("Active")
    expect(page.get_by_role("button", name="Disable Gallery")).to_be_focused()
    columns = gallery.get_by_label("columns", exact=True)
    columns.fill("9")
    gallery.get_by_role("button", name="Save the Gallery settings").click()
    expect(columns).to_have_attribute("aria-invalid", "true")
    expect(gallery.locator(".field-error").first).to_be_visible()
    assert cms.call("GET", "/plugins/gallery")["settings"]["columns"] == 3
    tab.check("plugins-refused")
    columns.fill("4")
    gallery.get_by_role("button", name="Save the Gallery settings").click()
    expect(gallery.get_by_role("status")).to_have_text("Saved.")
    assert cms.call("GET", "/plugins/gallery")["settings"]["columns"] == 4

    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Design").click()
    surface = page.locator('section[data-surface="gallery.frame"]')
    border = surface.get_by_label("Border", exact=True)
    border.fill("not a colour")
    surface.get_by_role("button", name="Save Gallery frame").click()
    expect(border).to_have_attribute("aria-invalid", "true")
    border.fill("#FF0000")
    surface.get_by_role("button", name="Save Gallery frame").click()
    surface = page.locator('section[data-surface="gallery.frame"]')
    expect(surface.get_by_role("button", name="Remove the Border override")).to_be_visible()
    design = {s["id"]: s for s in cms.call("GET", "/design")["data"]}
    border_now = next(p for p in design["gallery.frame"]["properties"] if p["key"] == "border")
    assert border_now["value"] == "#ff0000" and border_now["effective"] == "#ff0000"
    tab.check("design")
    surface.get_by_role("button", name="Remove the Border override").click()
    surface = page.locator('section[data-surface="gallery.frame"]')
    expect(surface.get_by_role("button", name="Remove the Border override")).to_have_count(0)
    design = {s["id"]: s for s in cms.call("GET", "/design")["data"]}
    border_now = next(p for p in design["gallery.frame"]["properties"] if p["key"] == "border")
    assert border_now["value"] is None and border_now["effective"] == "#222222"


def test_a_viewer_reads_the_website_parts_and_sees_no_editor_plugins_or_design(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    cms = Cms(gateway.base_url).sign_in(OWNER)
    viewer = "vera@example.com"
    cms.call(
        "POST",
        "/users",
        {"email": viewer, "password": PASSWORD, "name": "Vera", "role": "viewer"},
        201,
    )
    tab = signed_in(screens, viewer, "/cms/admin/website")
    page = tab.page
    nav = page.get_by_role("navigation", name="Sections")
    expect(nav.get_by_role("link", name="Website parts")).to_be_visible()
    for hidden in ("Visual editor", "Plugins", "Design"):
        expect(nav.get_by_role("link", name=hidden)).to_have_count(0)
    menu = page.get_by_role("form", name="Main menu")
    expect(menu.get_by_text("Editors and admins change menus.")).to_be_visible()
    expect(page.get_by_role("button", name="Save Main menu")).to_have_count(0)
    expect(page.get_by_role("button", name="Save Footer")).to_have_count(0)
    # The plugins screen itself: the API refuses, the page says so.
    page.goto("/cms/admin/plugins")
    expect(page.get_by_role("alert")).to_be_visible()
