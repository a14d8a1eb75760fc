"""The signed-in person's own account screen (name, password, sessions, the way
to their agent keys) and an author's view of the social screens; and a new
entry filed under terms before its first save."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser.cms import OWNER, PASSWORD, Cms, module_gateway, owner_api, signed_in
from tests.browser.conftest import Screens
from tests.conftest import GatewayProcess

__all__ = ["module_gateway"]  # the module-scoped fixture, used through `gateway`

AUTHOR = "ann@example.com"
NEW_PASSWORD = "a much longer passphrase now"


@pytest.fixture
def gateway(module_gateway: GatewayProcess) -> GatewayProcess:
    return module_gateway


@pytest.fixture(scope="module")
def cms(module_gateway: GatewayProcess) -> Cms:
    """The owner through the API, signed in once: sign-ins are limited to ten in 15 minutes."""
    return owner_api(module_gateway.base_url)


def test_your_account_changes_the_name_and_password_and_ends_other_sessions(
    screens: Callable[[], Screens], gateway: GatewayProcess, cms: Cms
) -> None:
    cms.call(
        "POST",
        "/users",
        {"email": AUTHOR, "password": PASSWORD, "name": "Ann", "role": "author"},
        201,
    )
    other = Cms(gateway.base_url).sign_in(AUTHOR)  # another session of Ann's
    tab = signed_in(screens, AUTHOR, "/cms/admin/entries")
    page = tab.page
    page.get_by_role("link", name="Your account").click()
    sessions = page.get_by_role("table", name="Your sessions")
    expect(sessions.get_by_role("row")).to_have_count(3)  # the header, this tab, the API client
    expect(sessions).to_contain_text("This session")
    tab.check("account")

    page.get_by_label("Name", exact=True).fill("Ann Author")
    page.get_by_role("button", name="Save your details").click()
    expect(page.get_by_role("form", name="Your details").get_by_role("status")).to_have_text(
        "Saved."
    )
    people = cms.call("GET", "/users?limit=100")["data"]
    assert next(p["name"] for p in people if p["email"] == AUTHOR) == "Ann Author"

    form = page.get_by_role("form", name="Password")
    form.get_by_label("Current password").fill("not it at all")
    form.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    form.get_by_label("New password again").fill(NEW_PASSWORD)
    form.get_by_role("button", name="Change the password").click()
    expect(form.get_by_label("Current password")).to_have_attribute("aria-invalid", "true")
    form.get_by_label("Current password").fill(PASSWORD)
    form.get_by_label("New password", exact=True).fill(NEW_PASSWORD)
    form.get_by_label("New password again").fill(NEW_PASSWORD)
    form.get_by_role("button", name="Change the password").click()
    expect(form.get_by_role("status")).to_contain_text("other sessions were signed out")
    expect(sessions.get_by_role("row")).to_have_count(2)
    assert other.client.get("/auth/me").status_code == 401
    login = httpx.post(
        gateway.base_url + "/cms/api/auth/login", json={"email": AUTHOR, "password": NEW_PASSWORD}
    )
    assert login.status_code == 200, login.text
    expect(page.get_by_role("link", name="Your agent keys")).to_have_attribute(
        "href", "/cms/admin/keys"
    )

    # An author writes social posts: no settings, no schedule or publish.
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Social").click()
    social = page.get_by_role("navigation", name="Social")
    expect(social.get_by_role("link", name="Posts")).to_be_visible()
    expect(social.get_by_role("link", name="Networks and accounts")).to_have_count(0)
    page.get_by_role("link", name="New post").click()
    expect(page.get_by_role("button", name="Save as draft")).to_be_visible()
    expect(page.get_by_role("button", name="Publish now")).to_have_count(0)
    expect(page.get_by_text("Editors schedule and publish")).to_be_visible()
    tab.check("social-composer-author")


def test_a_new_entry_is_filed_under_terms_with_its_first_save(
    screens: Callable[[], Screens], gateway: GatewayProcess, cms: Cms
) -> None:
    cms.call("POST", "/types", {"name": "note", "fields": []}, 201)
    term = cms.call("POST", "/taxonomies/categories/terms", {"name": "Brewing"}, 201)
    tab = signed_in(screens, OWNER, "/cms/admin/entries/new?type=note")
    page = tab.page
    filing = page.get_by_role("region", name="Filed under")
    filing.get_by_role("checkbox", name="Brewing").check()
    tab.check("entry-new-terms")
    page.get_by_label("Title (required)").fill("Cold brew")
    page.get_by_role("button", name="Create", exact=True).click()
    page.wait_for_url("**/admin/entries/*?created=1")
    entry_id = page.url.split("/entries/")[1].split("?")[0]
    assert [t["id"] for t in cms.call("GET", f"/entries/{entry_id}")["terms"]] == [term["id"]]
    expect(page.get_by_role("checkbox", name="Brewing")).to_be_checked()
