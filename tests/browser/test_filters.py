"""The filters screens: a Sieve script checked as it is typed, its error on its line; the list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import Screens
from tests.browser.helpers import go_to_section, signed_in_tab
from tests.conftest import GatewayProcess

EMAIL = "owner@example.com"
BROKEN = 'require "fileinto";\nif header :contains "List-Id" "python" {\n  fileinto;\n}\n'
FIXED = (
    'require "fileinto";\nif header :contains "List-Id" "python" {\n  fileinto "Lists/python";\n}\n'
)


def make_addresses(page: Any, domain: str, *local_parts: str) -> list[str]:
    """A domain and its addresses through the API, with the browser's session; their ids."""
    made = page.request.post("/api/domains", data={"name": domain})
    assert made.status == 201, made.text()
    domain_id = made.json()["id"]
    ids = []
    for local_part in local_parts:
        address = page.request.post(
            f"/api/domains/{domain_id}/addresses",
            data={"local_part": local_part, "password": "a mailbox passphrase"},
        )
        assert address.status == 201, address.text()
        ids.append(address.json()["id"])
    return ids


def test_a_filter_with_an_error_shows_its_line_then_the_fixed_one_is_saved(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = signed_in_tab(screens, gateway.base_url, EMAIL)
    page = tab.page
    go_to_section(page, "Filters")
    page.wait_for_url("**/filters")
    page.get_by_text("You have no addresses yet.").wait_for()
    make_addresses(page, "example.net", "ada", "lists")
    page.reload()
    page.get_by_text("No filters here yet.").wait_for()
    assert page.get_by_text("You have no addresses yet.").is_hidden()
    tab.check("filters-empty")
    page.get_by_role("link", name="New filter").click()
    page.wait_for_url("**/filters/new")
    page.get_by_label("Address").select_option(label="lists@example.net")
    page.get_by_label("Name").fill("Python lists")

    script = page.get_by_label("Sieve script")
    script.fill(BROKEN)
    # Checked as typed: the compiler's words, its line marked beside the script.
    problem = page.locator("#script-bad")
    problem.filter(has_text="Line 3: missing argument for command fileinto").wait_for()
    assert page.locator("#gutter .bad").inner_text() == "▶ 3"
    assert script.get_attribute("aria-invalid") == "true"
    assert "script-check" in (script.get_attribute("aria-describedby") or "")
    tab.check("filter-error")

    # The keyboard reaches the line: the button selects it in the script.
    page.get_by_role("button", name="Go to line 3").click()
    assert script.evaluate("el => el === document.activeElement")
    selected = script.evaluate("el => el.value.slice(el.selectionStart, el.selectionEnd)")
    assert selected == "  fileinto;"

    # Saving it anyway is refused by the API with the same line.
    page.get_by_role("button", name="Save filter").click()
    page.get_by_role("alert").filter(has_text="Script does not compile: line 3").wait_for()
    assert page.request.get("/api/filters").json()["total"] == 0

    script.fill(FIXED)
    page.locator("#script-ok").filter(has_text="The script compiles. Uses fileinto.").wait_for()
    assert page.locator("#gutter .bad").count() == 0
    assert script.get_attribute("aria-invalid") is None
    page.get_by_role("button", name="Save filter").click()
    page.wait_for_url(lambda url: "/filters/" in url and "/new" not in url)
    page.get_by_role("status").filter(has_text="Saved Python lists.").wait_for()
    tab.check("filter-saved")
    saved = page.request.get("/api/filters").json()
    assert saved["total"] == 1
    assert saved["data"][0]["script"] == FIXED
    assert saved["data"][0]["enabled"] is True

    # The overview counts what now exists.
    go_to_section(page, "Overview")
    expect(page.locator("#count-filters")).to_have_text("1")
    assert page.locator("#count-domains").inner_text() == "1"
    assert page.locator("#count-addresses").inner_text() == "2"
    tab.check("overview-counts")
    page.go_back()

    # Disabled and enabled again from the list.
    page.get_by_role("link", name="All filters").click()
    row = page.locator("#filters-list > li", has_text="Python lists")
    row.get_by_text("lists@example.net").wait_for()
    row.get_by_role("button", name="Disable Python lists").click()
    page.get_by_role("status").filter(has_text="Python lists is disabled.").wait_for()
    assert page.request.get("/api/filters").json()["data"][0]["enabled"] is False
    assert page.get_by_role("button", name="Enable Python lists").evaluate(
        "el => el === document.activeElement"
    )
    tab.check("filters")

    # Deleted from its editor.
    row.get_by_role("link", name="Python lists").click()
    page.get_by_label("Sieve script").wait_for()
    page.locator("#script-ok").filter(has_text="compiles").wait_for()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete filter").click()
    page.wait_for_url(tab.origin + "/filters")
    page.get_by_text("No filters here yet.").wait_for()
    assert page.request.get("/api/filters").json()["total"] == 0


def test_the_filters_list_pages_and_narrows_to_one_address(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = signed_in_tab(screens, gateway.base_url, EMAIL)
    page = tab.page
    ada, lists = make_addresses(page, "example.net", "ada", "lists")
    for number in range(27):
        made = page.request.post(
            "/api/filters",
            data={
                "address_id": lists if number % 9 else ada,
                "name": f"Rule {number:02}",
                "script": "keep;",
                "position": number,
            },
        )
        assert made.status == 201, made.text()

    page.goto("/filters")
    page.get_by_text("Page 1 of 2 (27)").wait_for()
    assert page.locator("#filters-list > li").count() == 25
    page.get_by_role("button", name="Next page").click()
    page.get_by_text("Page 2 of 2 (27)").wait_for()
    assert page.locator("#filters-list > li").count() == 2
    assert page.url.endswith("/filters?page=2")
    tab.check("filters-page-2")

    # One address: the filters of ada@ only (rules 0, 9 and 18), and a new one starts there.
    page.get_by_label("Address").select_option(label="ada@example.net")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(lambda url: f"address_id={ada}" in url)
    names = page.locator("#filters-list > li h3 a")
    names.nth(2).wait_for()
    assert names.all_inner_texts() == ["Rule 00", "Rule 09", "Rule 18"]
    assert page.get_by_role("navigation", name="Pages of filters").is_hidden()
    page.get_by_label("Name contains").fill("18")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(lambda url: "search=18" in url)
    page.get_by_role("link", name="Rule 18").wait_for()
    assert names.count() == 1
    page.get_by_role("link", name="New filter").click()
    page.wait_for_url("**/filters/new?address_id=*")
    expect(page.get_by_label("Address")).to_have_value(ada)
