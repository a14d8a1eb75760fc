"""What every panel screen does alike: an ended session, a plan without the feature, the navigation.

The gateway runs the billing tests' plans (tests/mail/billing_helpers.py): its
default plan, Starter, has custom domains and API sending but neither webhooks
nor filters, so those screens meet the API's 402 plan_required.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.browser.conftest import ARTIFACTS, NARROW, WIDE, Screens
from tests.browser.helpers import api_session, sign_in, signed_in_tab
from tests.conftest import GatewayProcess
from tests.mail.billing_helpers import PLANS_TOML

OWNER = "owner@example.com"


@pytest.fixture
def gateway_env(tmp_path: Path) -> dict[str, str]:
    plans = tmp_path / "plans.toml"
    plans.write_text(PLANS_TOML)
    return {"PLANS_FILE": str(plans)}


def end_the_session(other: httpx.Client) -> None:
    """Another client of the same account signs every other session out (the browser's too)."""
    response = other.post("/api/account/sessions/revoke-others", json={})
    assert response.status_code == 200, response.text
    assert response.json()["revoked"] >= 1


def lands_on_sign_in(tab: Screens, back_to: str) -> None:
    tab.page.wait_for_url("**/signin?next=*")
    query = parse_qs(urlsplit(tab.page.url).query)
    assert query["next"] == [back_to]
    # Signing in again brings the person back to the very page.
    sign_in(tab, OWNER)
    tab.page.wait_for_url(tab.origin + back_to)


def test_an_ended_session_goes_back_to_sign_in_from_every_kind_of_screen(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = signed_in_tab(screens, gateway.base_url, OWNER)
    page = tab.page
    other = api_session(gateway.base_url, OWNER, "other device")

    # A shell screen (its list and form through /api): creating an API key.
    page.goto("/api-keys")
    page.get_by_role("heading", name="API keys", exact=True).wait_for()
    end_the_session(other)
    page.get_by_label("Name").fill("deploys")
    page.get_by_role("button", name="Create key").click()
    lands_on_sign_in(tab, "/api-keys")

    # A server-rendered screen whose regions the API refreshes: adding a domain.
    page.goto("/domains?sort=name")
    page.get_by_role("heading", name="Domains", exact=True).wait_for()
    end_the_session(other)
    page.get_by_label("Domain name").fill("example.org")
    page.get_by_role("button", name="Add domain").click()
    lands_on_sign_in(tab, "/domains?sort=name")

    # A screen rendered on the server with forms posting to /api: the account's name.
    page.goto("/account")
    end_the_session(other)
    page.get_by_label("Name").fill("Ada")
    page.get_by_role("button", name="Save name").click()
    lands_on_sign_in(tab, "/account")
    tab.check("signed-in-again")
    # No screen showed the API's answer itself on the way.
    assert "statusCode" not in page.inner_text("body")


def test_a_plan_without_the_feature_says_so_and_links_to_billing(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = signed_in_tab(screens, gateway.base_url, OWNER)
    page = tab.page
    page.goto("/webhooks/new")
    page.get_by_label("Endpoint URL").fill("https://hooks.example.net/mail")
    page.locator("input[type=checkbox][name=events]").first.check()
    page.get_by_role("button", name="Create webhook").click()
    error = page.locator("form .error").first
    error.get_by_text("not included in your plan (Starter)").wait_for()
    assert "{" not in error.inner_text()
    link = error.get_by_role("link", name="See the plans on Billing")
    # Not the endpoint's fault: no field is marked wrong.
    assert page.get_by_label("Endpoint URL").get_attribute("aria-invalid") is None
    tab.check("plan-required")
    link.click()
    page.wait_for_url("**/billing")


def focused(tab: Screens) -> str:
    return str(tab.page.evaluate("document.activeElement.textContent.trim()"))


def test_the_grouped_navigation_by_keyboard_wide_and_narrow(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    # The first account is the instance's owner: it also has "OAuth apps".
    tab = signed_in_tab(screens, gateway.base_url, OWNER)
    page = tab.page
    page.goto("/filters")
    nav = page.get_by_role("navigation", name="Sections")
    mail = nav.get_by_role("button", name="Mail")
    sending = nav.get_by_role("button", name="Sending")
    account = nav.get_by_role("button", name="Account")
    assert nav.get_by_role("button", name="Menu").is_hidden()
    # Three groups on one line at a desktop's width; the current one says so.
    boxes = [b.bounding_box() for b in (mail, sending, account)]
    assert len({round(box["y"]) for box in boxes if box}) == 1
    assert mail.inner_text().startswith("Mail") and "current section" in mail.text_content()
    assert nav.get_by_role("link").filter(visible=True).count() == 0

    page.get_by_role("link", name="Mail", exact=True).focus()  # the brand, just before
    page.keyboard.press("Tab")
    assert focused(tab).startswith("Mail")
    page.keyboard.press("Enter")
    assert mail.get_attribute("aria-expanded") == "true"
    filters = nav.get_by_role("link", name="Filters")
    assert filters.get_attribute("aria-current") == "page"
    page.keyboard.press("Tab")
    assert focused(tab) == "Overview"
    page.keyboard.press("Escape")
    assert mail.get_attribute("aria-expanded") == "false"
    assert focused(tab).startswith("Mail")

    # Tab to Sending, open it, walk its links; leaving it for Account closes it.
    page.keyboard.press("Tab")
    assert focused(tab) == "Sending"
    page.keyboard.press("Space")
    walked = []
    for _ in range(4):
        page.keyboard.press("Tab")
        walked.append(focused(tab))
    assert walked == ["Sent email", "API keys", "Suppressions", "Webhooks"]
    page.keyboard.press("Tab")
    assert focused(tab) == "Account"
    assert sending.get_attribute("aria-expanded") == "false"
    page.keyboard.press("Enter")
    links = nav.locator("#nav-account a").all_inner_texts()
    assert links == ["Account", "Billing", "Referrals", "OAuth apps"]
    tab.check("nav-account-open")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert focused(tab) == "Billing"
    page.keyboard.press("Enter")
    page.wait_for_url("**/billing")
    current = nav.locator("a[aria-current]")
    assert current.all_inner_texts() == ["Billing"]
    assert current.get_attribute("aria-current") == "page"
    assert "current section" in account.text_content()

    # A phone: one Menu button, every group named inside it.
    page.set_viewport_size(NARROW)
    menu = nav.get_by_role("button", name="Menu")
    assert menu.is_visible() and mail.is_hidden()
    menu.focus()
    page.keyboard.press("Enter")
    assert menu.get_attribute("aria-expanded") == "true"
    assert nav.locator("#nav-sending-label").is_visible()
    assert nav.get_by_role("link").filter(visible=True).count() == 12
    page.keyboard.press("Tab")
    assert focused(tab) == "Overview"
    page.keyboard.press("Escape")
    assert menu.get_attribute("aria-expanded") == "false"
    assert focused(tab) == "Menu"
    assert nav.get_by_role("link").filter(visible=True).count() == 0
    page.keyboard.press("Enter")
    tab.check("nav-menu-open")
    page.set_viewport_size(WIDE)


def test_the_navigation_is_plain_links_without_scripts(
    browser: Any, gateway: GatewayProcess, screens: Callable[[], Screens]
) -> None:
    signed_in_tab(screens, gateway.base_url, OWNER)  # makes the owner
    context = browser.new_context(
        base_url=gateway.base_url, viewport=WIDE, java_script_enabled=False
    )
    try:
        page = context.new_page()
        client = api_session(gateway.base_url, OWNER, "scriptless")
        cookies = [
            {"name": c.name, "value": c.value, "url": gateway.base_url} for c in client.cookies.jar
        ]
        context.add_cookies(cookies)
        page.goto("/referrals")
        nav = page.get_by_role("navigation", name="Sections")
        assert nav.get_by_role("button").filter(visible=True).count() == 0
        for group in ("Mail", "Sending", "Account"):
            assert nav.locator(f"#nav-{group.lower()}-label").is_visible()
        assert nav.get_by_role("link").filter(visible=True).count() == 12
        folder = ARTIFACTS / "test_the_navigation_is_plain_links_without_scripts"
        folder.mkdir(parents=True, exist_ok=True)
        for label, size in (("wide", WIDE), ("narrow", NARROW)):
            page.set_viewport_size(size)
            page.screenshot(path=str(folder / f"no-scripts-{label}.png"), full_page=True)
        nav.get_by_role("link", name="Billing").click()
        page.wait_for_url("**/billing")
        assert nav.get_by_role("link", name="Billing").get_attribute("aria-current") == "page"
    finally:
        context.close()


def test_the_overview_cards_share_one_grid(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = signed_in_tab(screens, gateway.base_url, OWNER)
    page = tab.page
    cards = page.locator("main .cards .card")
    page.get_by_role("heading", name="Recent activity").wait_for()
    assert cards.count() == 7
    for size, columns in ((WIDE, 3), (NARROW, 1)):
        page.set_viewport_size(size)
        lefts = {round(b["x"]) for b in (c.bounding_box() for c in cards.all()) if b}
        assert len(lefts) == columns, (size, lefts)
        rows: dict[int, set[int]] = {}
        for card in cards.all():
            box = card.bounding_box()
            assert box is not None
            rows.setdefault(round(box["y"]), set()).add(round(box["height"]))
        # The cards of a row are as tall as each other.
        assert all(len(heights) == 1 for heights in rows.values()), rows
    page.set_viewport_size(WIDE)
    tab.check("overview")
