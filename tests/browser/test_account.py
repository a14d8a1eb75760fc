"""The account screens: profile, email, password, notifications, and the sessions list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.browser.conftest import Screens
from tests.browser.helpers import (
    PASSWORD,
    api_session,
    go_to_section,
    mailed_link,
    sign_in,
    signed_in_tab,
)
from tests.conftest import GatewayProcess

EMAIL = "person@example.com"
NEW_EMAIL = "renamed@example.org"
NEW_PASSWORD = "another long passphrase"
FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:130.0) Gecko/20100101 Firefox/130.0"
PHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Version/17.0 Safari/604.1"


def sections(page: Any) -> Any:
    return page.get_by_role("navigation", name="Sections")


def test_a_person_revokes_another_session_and_then_every_other_one(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = signed_in_tab(screens, gateway.base_url, EMAIL)
    page = tab.page
    laptop = api_session(gateway.base_url, EMAIL, FIREFOX)
    phone = api_session(gateway.base_url, EMAIL, PHONE)
    assert laptop.get("/api/auth/me").status_code == 200

    go_to_section(page, "Account")
    page.get_by_role("link", name="Sessions").first.click()
    page.wait_for_url("**/account/sessions")
    # The section stays marked in the navigation on its sub-page.
    assert (
        sections(page)
        .get_by_role("link", name="Account", include_hidden=True)
        .get_attribute("aria-current")
        == "location"
    )
    # The sign-up's own session (make_account), this browser, the laptop and the phone.
    rows = page.locator("#sessions-list > li")
    rows.nth(3).wait_for()
    assert rows.count() == 4
    current = page.locator("#sessions-list > li", has_text="This session")
    assert current.count() == 1
    assert current.get_by_role("button", name="Revoke").count() == 0
    tab.check("sessions")

    laptop_row = page.locator("#sessions-list > li", has_text="Firefox on Windows")
    laptop_row.get_by_role("button", name="Revoke").click()
    page.get_by_role("status").filter(has_text="Signed out Firefox on Windows").wait_for()
    assert rows.count() == 3
    # Revocation is immediate: the other client's next request is refused.
    assert laptop.get("/api/auth/me").status_code == 401
    assert phone.get("/api/auth/me").status_code == 200

    page.get_by_role("button", name="Sign out all other sessions").click()
    page.get_by_role("status").filter(has_text="Signed out 2 other sessions").wait_for()
    assert phone.get("/api/auth/me").status_code == 401
    assert rows.count() == 1
    assert page.get_by_role("button", name="Sign out all other sessions").is_hidden()
    # This browser is still signed in.
    assert page.request.get("/api/auth/me").status == 200
    tab.check("sessions-alone")


def test_a_person_changes_name_notifications_email_and_password(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = signed_in_tab(screens, gateway.base_url, EMAIL)
    page = tab.page
    page.goto("/account")
    assert (
        sections(page)
        .get_by_role("link", name="Account", include_hidden=True)
        .get_attribute("aria-current")
        == "page"
    )
    tab.check("account")

    # Keyboard: the first Tab reaches the skip link, which jumps past the navigation.
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    assert skip.evaluate("el => el === document.activeElement")
    assert skip.is_visible()
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.closest('main') !== null")
    assert focused, "Tab after the skip link lands inside the main content"

    page.get_by_label("Name").fill("Grace Person")
    page.get_by_role("button", name="Save name").click()
    page.get_by_role("status").filter(has_text="Saved.").wait_for()

    # Preferences: the server renders what was saved.
    page.get_by_label("DNS alerts").uncheck()
    page.get_by_label("Product news").check()
    page.get_by_role("button", name="Save preferences").click()
    page.get_by_role("status").filter(has_text="Preferences saved.").wait_for()
    page.reload()
    assert not page.get_by_label("DNS alerts").is_checked()
    assert page.get_by_label("Product news").is_checked()
    assert page.get_by_label("Name").input_value() == "Grace Person"
    me = page.request.get("/api/auth/me").json()
    assert me["notifications"]["dns_alerts"] is False
    assert me["name"] == "Grace Person"

    # A wrong password is said next to the form and tied to its field.
    form = page.locator("#email-change")
    form.get_by_label("New email address").fill(NEW_EMAIL)
    password = form.get_by_label("Current password")
    password.fill("not my password")
    form.get_by_role("button", name="Change email").click()
    form.get_by_role("alert").filter(has_text="Password is incorrect").wait_for()
    assert password.get_attribute("aria-invalid") == "true"
    assert "email-error" in (password.get_attribute("aria-describedby") or "")
    assert password.evaluate("el => el === document.activeElement")
    tab.check("account-error")
    password.fill(PASSWORD)
    form.get_by_role("button", name="Change email").click()
    form.get_by_role("status").filter(has_text=f"We sent a link to {NEW_EMAIL}").wait_for()
    # The address changes only once the new one is confirmed.
    assert page.request.get("/api/auth/me").json()["email"] == EMAIL
    page.goto(mailed_link(gateway, "verify_email", NEW_EMAIL))
    page.get_by_role("button", name="Confirm").click()
    page.get_by_role("status").filter(has_text="is confirmed").wait_for()
    assert page.request.get("/api/auth/me").json()["email"] == NEW_EMAIL

    page.goto("/account")
    form = page.locator("#password-change")
    form.get_by_label("Current password").fill(PASSWORD)
    form.get_by_label("New password").fill("short")
    form.get_by_role("button", name="Change password").click()
    form.get_by_role("alert").filter(has_text="at least 8").wait_for()
    assert form.get_by_label("New password").get_attribute("aria-invalid") == "true"
    form.get_by_label("New password").fill(NEW_PASSWORD)
    form.get_by_role("button", name="Change password").click()
    form.get_by_role("status").filter(has_text="Password changed").wait_for()

    page.goto("/signout")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/signin")
    sign_in(tab, NEW_EMAIL, password=NEW_PASSWORD)
    page.wait_for_url(tab.origin + "/")
    page.get_by_text("Grace Person").wait_for()


def test_a_person_deletes_the_account_with_the_password(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = signed_in_tab(screens, gateway.base_url, EMAIL)
    page = tab.page
    page.goto("/account")
    form = page.locator("#delete-account")
    form.get_by_label("Current password").fill(PASSWORD)
    # Cancelling the confirmation changes nothing.
    page.once("dialog", lambda dialog: dialog.dismiss())
    form.get_by_role("button", name="Delete my account").click()
    assert page.request.get("/api/auth/me").status == 200
    page.once("dialog", lambda dialog: dialog.accept())
    form.get_by_role("button", name="Delete my account").click()
    page.wait_for_url("**/signin")
    assert page.request.get("/api/auth/me").status == 401
    refused = page.request.post("/api/auth/login", data={"email": EMAIL, "password": PASSWORD})
    assert refused.status == 401
