"""The owner signs up, signs out, turns on two-factor, and signs in with a TOTP code."""

from __future__ import annotations

import time
from collections.abc import Callable

import pyotp

from tests.browser.conftest import Screens
from tests.browser.helpers import PASSWORD, mailed_link, make_account, sign_in
from tests.conftest import GatewayProcess

OWNER = "owner@example.com"
PERSON = "person@example.com"
NEW_PASSWORD = "a new and long passphrase"


def test_the_owner_signs_up_signs_out_and_signs_in_with_a_totp_code(
    screens: Callable[[], Screens],
) -> None:
    tab = screens()
    page = tab.page
    # A signed-out visit to the panel lands on sign-in, which leads to sign-up.
    page.goto("/")
    assert page.url == tab.origin + "/signin?next=/"
    page.get_by_role("link", name="Create an account").click()
    page.wait_for_url("**/signup")
    page.get_by_text("the first account owns it").wait_for()
    tab.check("signup")

    page.get_by_label("Name").fill("Ada Owner")
    page.get_by_label("Email").fill(OWNER)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url(tab.origin + "/")
    page.get_by_text("Owner of this instance").wait_for()
    tab.check("overview")

    # Two-factor enrolment through its screen: the QR code, and the key beside it.
    page.get_by_role("link", name="Turn it on").click()
    page.wait_for_url("**/account/two-factor")
    qr = page.get_by_role("img", name="QR code for your authenticator app")
    qr.wait_for()
    assert qr.evaluate("img => img.complete && img.naturalWidth > 100")
    drawn = page.request.get("/account/two-factor/qr.svg")
    assert drawn.headers["content-type"] == "image/svg+xml"
    assert drawn.headers["cross-origin-resource-policy"] == "same-origin"
    assert drawn.text().startswith("<svg")
    secret = page.locator("#totp-secret").inner_text().replace(" ", "")
    totp = pyotp.TOTP(secret)
    tab.check("two-factor")
    code = page.get_by_label("Enter the six-digit code the app shows")
    code.fill("000000" if totp.now() != "000000" else "111111")
    page.get_by_role("button", name="Turn on two-factor").click()
    page.get_by_role("alert").filter(has_text="Code is incorrect").wait_for()
    assert code.get_attribute("aria-invalid") == "true"
    # The previous step's code: the sign-in below then uses a later, unspent step.
    code.fill(totp.at(time.time() - 30))
    page.get_by_role("button", name="Turn on two-factor").click()
    page.get_by_role("status").filter(has_text="Two-factor sign-in is on").wait_for()
    tab.check("two-factor-on")
    # The enrolment is over: its QR code is gone.
    assert page.request.get("/account/two-factor/qr.svg").status == 404

    page.get_by_role("link", name="Sign out").click()
    page.wait_for_url("**/signout")
    tab.check("signout")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/signin")
    assert page.request.get("/api/auth/me").status == 401

    # A wrong password is said on the page, next to the form.
    page.get_by_label("Email").fill(OWNER)
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("alert").filter(has_text="invalid").wait_for()
    tab.check("signin-error")

    sign_in(tab, OWNER)
    code = page.get_by_label("Code from your authenticator app")
    code.wait_for()
    assert code.evaluate("el => el === document.activeElement")
    tab.check("signin-totp")
    code.fill(totp.now())
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(tab.origin + "/")
    page.get_by_text(OWNER).first.wait_for()
    assert page.request.get("/api/auth/me").json()["email"] == OWNER

    # Turning it off asks for the password again.
    page.goto("/account")
    off = page.locator("#totp-disable")
    off.get_by_label("Current password").fill("not the password")
    off.get_by_role("button", name="Turn off two-factor").click()
    off.get_by_role("alert").filter(has_text="Password is incorrect").wait_for()
    off.get_by_label("Current password").fill(PASSWORD)
    off.get_by_role("button", name="Turn off two-factor").click()
    page.get_by_role("link", name="Set up two-factor sign-in").wait_for()
    assert page.request.get("/api/auth/me").json()["totp_enabled"] is False


def test_a_person_follows_the_mailed_links_to_confirm_and_reset(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    make_account(gateway.base_url, PERSON)
    tab = screens()
    page = tab.page
    page.goto(mailed_link(gateway, "verify_email", PERSON))
    page.wait_for_url(lambda url: "/verify-email?token=" in url)
    tab.check("verify-email")
    page.get_by_role("button", name="Confirm").click()
    page.get_by_role("status").filter(has_text=f"{PERSON} is confirmed").wait_for()
    assert page.get_by_role("button", name="Confirm").is_hidden()
    # A link works once.
    page.reload()
    page.get_by_role("button", name="Confirm").click()
    page.get_by_role("alert").filter(has_text="Token is invalid").wait_for()
    tab.check("verify-email-spent")

    page.goto("/signin")
    page.get_by_role("link", name="Forgot your password?").click()
    page.get_by_label("Email").fill(PERSON)
    page.get_by_role("button", name="Send the link").click()
    page.get_by_role("status").filter(has_text="reset link").wait_for()
    tab.check("forgot-password")

    page.goto(mailed_link(gateway, "password_reset", PERSON))
    page.get_by_label("New password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Change password").click()
    page.get_by_role("status").filter(has_text="Your password was changed").wait_for()
    tab.check("reset-password")

    page.goto("/signin")
    sign_in(tab, PERSON, password=NEW_PASSWORD)
    page.wait_for_url(tab.origin + "/")
    assert page.locator("dd", has_text="Yes").is_visible()
