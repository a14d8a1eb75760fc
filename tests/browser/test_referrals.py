"""The referrals screen: the link to share, and the sign-ups it brought."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import expect

from tests.browser.conftest import Screens
from tests.browser.helpers import PASSWORD, go_to_section, signed_in_tab
from tests.conftest import GatewayProcess

EMAIL = "owner@example.com"
FRIEND = "friend@example.com"


def test_a_friend_signs_up_through_the_shared_link_and_is_counted(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = signed_in_tab(screens, gateway.base_url, EMAIL)
    page = tab.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    go_to_section(page, "Referrals")
    page.wait_for_url("**/referrals")
    code = page.request.get("/api/auth/me").json()["referral_code"]
    link = page.get_by_label("Referral link")
    assert link.input_value() == f"{gateway.base_url}/signup?ref={code}"
    assert page.locator("#referral-signups").inner_text() == "0"
    page.get_by_role("button", name="Copy").click()
    page.get_by_role("status").filter(has_text="Copied.").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == link.input_value()
    tab.check("referrals")

    friend = screens()
    friend.page.goto(link.input_value())
    friend.page.get_by_label("Email").fill(FRIEND)
    friend.page.get_by_label("Password").fill(PASSWORD)
    friend.page.get_by_role("button", name="Create account").click()
    friend.page.wait_for_url(friend.origin + "/")

    page.reload()
    expect(page.locator("#referral-signups")).to_have_text("1")
    assert page.locator("#referral-verified").inner_text() == "0"
