"""The CMS admin's management screens in the browser: keys (password asked
again, shown once), people and roles, the media library (with the in-use
refusal), taxonomies, menus, site settings, webhooks and activity.
"""

from __future__ import annotations

from collections.abc import Callable
from io import BytesIO
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image
from playwright.sync_api import expect

from tests.browser.cms import OWNER, PASSWORD, module_gateway, owner_api, signed_in
from tests.browser.conftest import Screens
from tests.conftest import GatewayProcess

__all__ = ["module_gateway"]  # the module-scoped fixture, used through `gateway`


@pytest.fixture
def gateway(module_gateway: GatewayProcess) -> GatewayProcess:
    return module_gateway


@pytest.fixture
def gateway_env() -> dict[str, str]:
    return {}


def test_keys_people_and_settings(screens: Callable[[], Screens], gateway: GatewayProcess) -> None:
    cms = owner_api(gateway.base_url)
    cms.call("POST", "/types", {"name": "page", "fields": []}, 201)
    tab = signed_in(screens, OWNER, "/cms/admin/keys")
    page = tab.page
    expect(page.get_by_text("You have no agent keys.")).to_be_visible()
    tab.check("keys")
    page.get_by_label("Key name").fill("deploy script")
    page.get_by_label("content.write").check()
    page.get_by_label("Your password").fill("not my password")
    page.get_by_role("button", name="Create the agent key").click()
    expect(page.get_by_label("Your password")).to_have_attribute("aria-invalid", "true")
    page.get_by_label("Your password").fill(PASSWORD)
    page.get_by_role("button", name="Create the agent key").click()
    secret = page.locator("#secret-value")
    expect(secret).to_contain_text("svcagt_")
    key = secret.inner_text()
    tab.check("keys-agent-created")
    me = httpx.get(
        gateway.base_url + "/cms/api/auth/me", headers={"Authorization": f"Bearer {key}"}
    )
    assert me.status_code == 200, me.text
    assert me.json()["credential"]["kind"] == "agent_key"
    assert me.json()["permissions"] == ["content.read", "content.write"]
    page.reload()
    expect(page.get_by_role("table", name="Your agent keys")).to_contain_text("deploy script")
    assert key not in page.content()

    page.get_by_label("Website name").fill("marketing site")
    page.get_by_role("button", name="Create the delivery key").click()
    expect(page.locator("#secret-value")).to_contain_text("svc_")
    delivery = page.locator("#secret-value").inner_text()
    answer = httpx.get(gateway.base_url + "/cms/content", headers={"X-Api-Key": delivery})
    assert answer.status_code == 200, answer.text

    page.get_by_role("navigation", name="Sections").get_by_role("link", name="People").click()
    page.get_by_label("Email").fill("ann@example.com")
    page.get_by_label("Name", exact=True).fill("Ann")
    page.get_by_label("Role", exact=True).select_option("author")
    page.get_by_label("First password").fill(PASSWORD)
    page.get_by_role("button", name="Add the person").click()
    # The screen's status and the page's announcer can both say it: either will do.
    expect(page.get_by_role("status").filter(has_text="was added as author").first).to_be_visible()
    page.get_by_label("Role of Ann", exact=True).select_option("editor")
    page.get_by_role("button", name="Change the role of Ann").click()
    expect(
        page.get_by_role("status").filter(has_text="ann@example.com is now editor.").first
    ).to_be_visible()
    tab.check("people")

    page.get_by_role("navigation", name="Sections").get_by_role(
        "link", name="Site settings"
    ).click()
    page.get_by_label("Site title").fill("The Tea Room")
    page.get_by_role("button", name="Save the settings").click()
    expect(page.get_by_role("status").filter(has_text="Saved.").first).to_be_visible()
    assert cms.call("GET", "/settings")["title"] == "The Tea Room"
    tab.check("settings")

    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Activity").click()
    expect(page.get_by_role("table", name="Activity")).to_contain_text("settings.updated")
    tab.check("activity")


def image_bytes() -> bytes:
    buffer = BytesIO()
    Image.new("RGB", (20, 20), "orange").save(buffer, "PNG")
    return buffer.getvalue()


def test_media_library_taxonomies_menus_and_webhooks(
    screens: Callable[[], Screens], gateway: GatewayProcess, tmp_path: Path
) -> None:
    cms = owner_api(gateway.base_url)
    if "post" not in [t["name"] for t in cms.call("GET", "/types")["data"]]:
        cms.call(
            "POST", "/types", {"name": "post", "fields": [{"key": "cover", "type": "media"}]}, 201
        )
    tab = signed_in(screens, OWNER, "/cms/admin/media")
    page = tab.page
    (tmp_path / "kettle.png").write_bytes(image_bytes())
    page.get_by_label("Alt text for the upload").fill("A kettle")
    page.get_by_label("Folder for the upload").fill("kitchen")
    page.locator("input[type=file]").set_input_files(str(tmp_path / "kettle.png"))
    expect(page.get_by_role("form", name="Details of kettle.png")).to_be_visible()
    media: dict[str, Any] = cms.call("GET", "/media?search=kettle")["data"][0]
    assert (media["alt"], media["folder"]) == ("A kettle", "kitchen")
    post = cms.call(
        "POST",
        "/entries",
        {"type": "post", "title": "Brewing", "data": {"cover": media["id"]}},
        201,
    )
    page.get_by_label("Search").fill("kitchen")
    expect(page.get_by_role("status").filter(has_text="1 file found.").first).to_be_visible()
    details = page.get_by_role("form", name="Details of kettle.png")
    details.get_by_label("Caption").fill("On the stove")
    details.get_by_role("button", name="Save").click()
    expect(details.get_by_role("status")).to_have_text("Saved.")
    page.once("dialog", lambda dialog: dialog.accept())
    details.get_by_role("button", name="Delete kettle.png").click()
    refusal = details.get_by_role("alert")
    expect(refusal).to_contain_text("Brewing")
    expect(refusal.get_by_role("link", name="Brewing")).to_have_attribute(
        "href", f"/cms/admin/entries/{post['id']}"
    )
    tab.check("media")

    page.goto("/cms/admin/taxonomies")
    page.get_by_label("Taxonomy", exact=True).select_option("categories")
    page.get_by_label("Term name").fill("Green tea")
    page.get_by_role("button", name="Add the term").click()
    expect(page.get_by_role("button", name="Delete the term Green tea")).to_be_visible()
    tab.check("taxonomies")

    page.goto("/cms/admin/menus")
    page.get_by_label("Menu name").fill("main")
    page.get_by_role("button", name="Create the menu").click()
    menu = page.get_by_role("form", name="Menu main")
    menu.get_by_role("button", name="Add a link").click()
    menu.get_by_label("Label", exact=True).nth(0).fill("Home")
    menu.get_by_label("Address or entry id").nth(0).fill("/")
    menu.get_by_role("button", name="Add a link").click()
    menu.get_by_label("Label", exact=True).nth(1).fill("Shop")
    menu.get_by_label("Address or entry id").nth(1).fill("javascript:alert(1)")
    menu.get_by_role("button", name="Indent: Shop (2)").click()
    menu.get_by_role("button", name="Save the menu").click()
    bad = menu.get_by_label("Address or entry id").nth(1)
    expect(bad).to_have_attribute("aria-invalid", "true")
    bad.fill("https://shop.example/")
    menu.get_by_role("button", name="Save the menu").click()
    expect(menu.get_by_role("status")).to_have_text("Saved.")
    saved = cms.call("GET", "/menus/main")
    assert saved["items"] == [
        {
            "label": "Home",
            "url": "/",
            "children": [{"label": "Shop", "url": "https://shop.example/"}],
        }
    ]
    tab.check("menus")

    page.goto("/cms/admin/webhooks")
    page.get_by_label("Name", exact=True).fill("Rebuild")
    page.get_by_label("Endpoint URL").fill("https://hooks.example/rebuild")
    page.get_by_label("entry.published").check()
    page.get_by_role("button", name="Create the webhook").click()
    expect(page.locator("#secret-value")).to_contain_text("whsec_")
    expect(page.get_by_role("table", name="Webhooks")).to_contain_text("entry.published")
    page.get_by_role("button", name="Attempts of Rebuild").click()
    expect(page.get_by_text("No delivery attempted yet.")).to_be_visible()
    tab.check("webhooks")


def test_the_navigation_is_a_sidebar_when_wide_and_one_menu_button_on_a_phone(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    owner_api(gateway.base_url)
    tab = signed_in(screens, OWNER, "/cms/admin/people")
    page = tab.page
    nav = page.get_by_role("navigation", name="Sections")
    menu = nav.get_by_role("button", name="Menu: People")
    page.set_viewport_size({"width": 1280, "height": 800})
    # Wide: every group's links at once, the current one marked, no button.
    expect(menu).to_be_hidden()
    for group, link in (("Content", "Media"), ("Site", "Design"), ("Administration", "Keys")):
        expect(nav.get_by_role("list", name=group).get_by_role("link", name=link)).to_be_visible()
    expect(nav.get_by_role("link", name="People")).to_have_attribute("aria-current", "page")
    # A phone: one button naming where you are; it opens the groups and Escape folds them.
    page.set_viewport_size({"width": 390, "height": 800})
    expect(menu).to_be_visible()
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(nav.get_by_role("link", name="Media")).to_be_hidden()
    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    nav.get_by_role("link", name="Media").focus()
    page.keyboard.press("Escape")
    expect(nav.get_by_role("link", name="Media")).to_be_hidden()
    expect(menu).to_be_focused()
    menu.click()
    nav.get_by_role("link", name="Media").click()
    page.wait_for_url("**/cms/admin/media")
    expect(page.get_by_role("button", name="Menu: Media")).to_be_visible()
    page.get_by_role("button", name="Menu: Media").click()
    tab.check("navigation-open")  # (it moves through both widths itself)
