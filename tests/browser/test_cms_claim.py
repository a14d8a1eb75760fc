"""The first visit claims a fresh site (no BOOTSTRAP_*), at the root under `--only content`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.cms import PASSWORD, Cms, build_bundles, cms_gateway
from tests.browser.conftest import Screens
from tests.conftest import GatewayProcess


@pytest.fixture
def gateway(database_url: str, tmp_path: Path) -> Iterator[GatewayProcess]:
    build_bundles()
    process = cms_gateway(tmp_path, database_url, "--only", "content")
    yield process
    process.stop()


def test_the_first_visit_claims_the_site_then_signs_out_and_in(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = screens()
    page = tab.page
    # Every admin page leads to the claim while the site has nobody.
    page.goto("/admin/entries")
    page.wait_for_url("**/admin/setup")
    expect(page.get_by_role("heading", name="Claim this site")).to_be_visible()
    tab.check("claim")

    page.get_by_label("Your name").fill("Olive Owner")
    page.get_by_label("Email").fill("olive@example.com")
    page.get_by_label("Password").fill("short")
    page.get_by_role("button", name="Claim this site").click()
    password = page.get_by_label("Password")
    expect(password).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("alert")).to_contain_text("Password")
    tab.check("claim-error")
    assert Cms(gateway.base_url, prefix="").call("GET", "/auth/setup")["setupRequired"]

    password.fill(PASSWORD)
    page.get_by_role("button", name="Claim this site").click()
    page.wait_for_url("**/admin/types")
    expect(page.locator(".who")).to_contain_text("Olive Owner (owner)")
    tab.check("types-empty")

    # Claimed: the claim page now sends people to sign in, and nobody can claim again.
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/admin/signin")
    page.goto("/admin/setup")
    page.wait_for_url("**/admin/signin")
    tab.check("signin")
    page.get_by_label("Email").fill("olive@example.com")
    page.get_by_label("Password").fill("wrong password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_be_visible()
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/admin/entries")
    expect(page.get_by_role("link", name="Create the first content type")).to_be_visible()
    tab.check("entries-no-types")
