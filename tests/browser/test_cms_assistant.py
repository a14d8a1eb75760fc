"""The assistant in the CMS admin: a provider connected and tested on the settings
screen, a conversation streamed into the tray, proposals as diff cards applied
into the open editor (a clean one refreshes, a dirty one asks first), a stale
card greyed alone, and the field assistant's suggestion accepted into a field.

The model is a local stand-in (tests/content/assistant/standins.py) speaking
Ollama's wire format, served from this test process on a loopback port; the
gateway subprocess calls it, the browser never does.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from playwright.sync_api import Page, expect

from tests.browser.cms import OWNER, module_gateway, owner_api, signed_in
from tests.browser.conftest import Screens
from tests.conftest import GatewayProcess, free_port
from tests.content.assistant.standins import Reply, Script, make_app

__all__ = ["module_gateway"]
MODEL = "llama3.1"


@pytest.fixture
def gateway(module_gateway: GatewayProcess) -> GatewayProcess:
    return module_gateway


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, Script]]:
    """The stand-in model server on a free loopback port, in a thread of its own."""
    script = Script()
    port = free_port()
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(make_app(script))

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "the stand-in model server did not start"
            time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", script
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


@pytest.fixture(scope="module")
def site(module_gateway: GatewayProcess, model: tuple[str, Script]) -> dict[str, Any]:
    """An `article` type (a text summary, a rich body) and three entries."""
    cms = owner_api(module_gateway.base_url)
    cms.call(
        "POST",
        "/types",
        {
            "name": "article",
            "label": "Article",
            "fields": [
                {"key": "summary", "type": "textarea", "label": "Summary"},
                {"key": "body", "type": "richtext", "label": "Body"},
            ],
        },
        201,
    )
    entries = {
        name: cms.call(
            "POST",
            "/entries",
            {"type": "article", "title": f"{name} draft", "data": {"summary": "A long summary."}},
            201,
        )["id"]
        for name in ("first", "second", "third", "fourth")
    }
    return {"cms": cms, "entries": entries}


def connect_through_api(site: dict[str, Any], url: str) -> None:
    site["cms"].call(
        "PUT", "/assistant/provider", {"kind": "ollama", "model": MODEL, "baseUrl": url}
    )


def open_tray(page: Page) -> None:
    page.get_by_role("button", name="Assistant", exact=True).click()
    expect(page.get_by_role("complementary", name="Assistant")).to_be_visible()
    expect(page.get_by_label("Message")).to_be_focused()


def ask(page: Page, text: str) -> None:
    page.get_by_label("Message").fill(text)
    page.get_by_role("button", name="Send").click()


def card(page: Page, text: str) -> Any:
    return page.locator("article.proposal", has_text=text)


def test_connect_a_provider_then_apply_a_proposal_into_the_clean_editor(
    screens: Any, site: dict[str, Any], model: tuple[str, Script]
) -> None:
    url, script = model
    tab: Screens = signed_in(screens, OWNER, "/cms/admin/assistant")
    page = tab.page
    expect(page.get_by_text("No provider is connected")).to_be_visible()
    page.get_by_label("Provider", exact=True).select_option("ollama")
    expect(page.get_by_label("API key", exact=True)).to_be_hidden()
    # A model the server does not have: the test fails and says which way.
    script.models = {MODEL}
    page.get_by_label("Model", exact=True).fill("no-such-model")
    page.get_by_label("Base URL").fill(url)
    page.get_by_role("button", name="Connect", exact=True).click()
    expect(page.get_by_role("button", name="Test the connection")).to_be_focused()
    page.get_by_role("button", name="Test the connection").click()
    expect(page.locator("#provider-test-result")).to_contain_text(
        "Connection test failed: The provider does not know that model name."
    )
    page.get_by_label("Model", exact=True).fill(MODEL)
    page.get_by_role("button", name="Save and reconnect").click()
    expect(page.locator("#provider-test-result")).to_be_empty()
    page.get_by_role("button", name="Test the connection").click()
    expect(page.locator("#provider-test-result")).to_contain_text("Connection test passed")
    # The stand-in heard the marker tool and nothing else.
    assert script.requests[-1]["body"]["tools"][0]["function"]["name"] == "connection_check"
    page.get_by_label("Let visitors ask questions on the website").check()
    page.get_by_label("Allowed origins").fill("https://www.example.com")
    page.get_by_role("button", name="Save the bubble").click()
    expect(page.locator("#bubble-snippet")).to_contain_text("/cms/ext/assistant/widget.js")
    page.get_by_label("Tokens per person per month").fill("50000")
    page.get_by_role("button", name="Save the limits").click()
    expect(page.locator("#announcer")).to_contain_text("The limits were saved")
    assert site["cms"].call("GET", "/assistant/budget")["limits"]["personMonthly"] == 50000
    tab.check("assistant-settings")

    entry = site["entries"]["first"]
    page.goto(f"/cms/admin/entries/{entry}")
    expect(page.get_by_label("Title (required)")).to_have_value("first draft")
    open_tray(page)
    script.replies += [
        Reply(
            text=["I suggest ", "a clearer title."],
            tools=[("propose_entry_update", {"entryId": entry, "title": "First, finished"})],
        ),
        Reply(text=["Review the proposal, then apply it."]),
    ]
    ask(page, "Give the first article a better title")
    proposal = card(page, "First, finished")
    expect(proposal).to_be_visible()
    expect(proposal.locator("del")).to_contain_text("draft")
    expect(proposal.locator("ins")).to_contain_text("finished")
    expect(page.locator(".bubble.assistant").last).to_contain_text("Review the proposal")
    expect(page.locator("#announcer")).to_contain_text("1 proposal to review")
    tab.check("assistant-tray")

    proposal.get_by_role("button", name="Apply").click()
    expect(proposal).to_contain_text("Status: applied")
    # The clean editor read the entry again: the new title, no notice to act on.
    expect(page.get_by_label("Title (required)")).to_have_value("First, finished")
    expect(page.locator("#save-status")).to_contain_text("proposal was applied")
    assert site["cms"].call("GET", f"/entries/{entry}")["title"] == "First, finished"

    # Escape closes the tray and gives the focus back to its button.
    page.get_by_label("Message").press("Escape")
    expect(page.get_by_role("complementary", name="Assistant")).to_be_hidden()
    expect(page.get_by_role("button", name="Assistant", exact=True)).to_be_focused()


def test_a_dirty_editor_asks_first_and_a_stale_card_is_greyed_alone(
    screens: Any, site: dict[str, Any], model: tuple[str, Script]
) -> None:
    url, script = model
    connect_through_api(site, url)
    second, third = site["entries"]["second"], site["entries"]["third"]
    tab: Screens = signed_in(screens, OWNER, f"/cms/admin/entries/{second}")
    page = tab.page
    expect(page.get_by_label("Title (required)")).to_have_value("second draft")
    open_tray(page)
    script.replies += [
        Reply(
            tools=[
                ("propose_entry_update", {"entryId": second, "title": "Second, better"}),
                ("propose_entry_update", {"entryId": third, "title": "Third, better"}),
            ]
        ),
        Reply(text=["Two proposals for you."]),
    ]
    ask(page, "Improve the titles of the second and third articles")
    expect(card(page, "Second, better")).to_be_visible()
    expect(card(page, "Third, better")).to_be_visible()

    # Someone changes the third article meanwhile: its proposal is out of date.
    site["cms"].call("PATCH", f"/entries/{third}", {"title": "Third, edited by hand"})
    stale = card(page, "Third, better")
    stale.get_by_role("button", name="Apply").click()
    expect(stale).to_have_class("proposal refused")
    expect(stale).to_contain_text("Refused:")
    expect(stale.get_by_role("button")).to_have_count(0)
    assert site["cms"].call("GET", f"/entries/{third}")["title"] == "Third, edited by hand"
    tab.check("assistant-refused-card")

    # The other card still works; the editor has unsaved changes, so it asks first.
    fresh = card(page, "Second, better")
    expect(fresh).not_to_have_class("proposal refused")
    page.get_by_label("Title (required)").fill("My own unsaved title")
    fresh.get_by_role("button", name="Apply").click()
    dialog = page.get_by_role("dialog", name="Unsaved changes in this entry")
    expect(dialog).to_be_visible()
    tab.check("assistant-dirty-dialog")
    dialog.get_by_role("button", name="Cancel").click()
    expect(fresh).to_contain_text("Status: waiting for you")
    expect(page.get_by_label("Title (required)")).to_have_value("My own unsaved title")

    fresh.get_by_role("button", name="Apply").click()
    dialog.get_by_role("button", name="Discard my changes and apply").click()
    expect(fresh).to_contain_text("Status: applied")
    expect(page.get_by_label("Title (required)")).to_have_value("Second, better")
    assert site["cms"].call("GET", f"/entries/{second}")["title"] == "Second, better"


def test_the_field_assistant_suggestion_is_accepted_into_the_field(
    screens: Any, site: dict[str, Any], model: tuple[str, Script]
) -> None:
    url, script = model
    connect_through_api(site, url)
    entry = site["entries"]["fourth"]
    tab: Screens = signed_in(screens, OWNER, f"/cms/admin/entries/{entry}")
    page = tab.page
    summary = page.get_by_label("Summary", exact=True)
    expect(summary).to_have_value("A long summary.")
    page.get_by_role("button", name="Assistant: Summary").click()
    page.get_by_label("What to do").first.select_option("translate")
    page.get_by_label("Into which language").first.fill("French")
    script.replies.append(Reply(text=["Un long ", "résumé."]))
    page.get_by_role("button", name="Ask").first.click()
    preview = page.get_by_role("region", name="Suggestion for Summary")
    expect(preview).to_have_text("Un long résumé.")
    asked = script.requests[-1]["body"]
    assert "French" in str(asked) and "A long summary." in str(asked)
    assert "tools" not in asked or not asked["tools"]
    # Nothing reaches the field before the person accepts.
    expect(summary).to_have_value("A long summary.")
    tab.check("field-assistant")
    page.get_by_role("button", name="Use this").click()
    expect(summary).to_have_value("Un long résumé.")
    expect(summary).to_be_focused()
    # It is an edit like typing: saved with the form, not before.
    assert site["cms"].call("GET", f"/entries/{entry}")["data"]["summary"] == "A long summary."
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("#save-status")).to_contain_text("Saved")
    assert site["cms"].call("GET", f"/entries/{entry}")["data"]["summary"] == "Un long résumé."

    # open_screen moves the admin once the answer is done; the tray comes along.
    open_tray(page)
    script.replies += [Reply(tools=[("open_screen", {"screen": "media"})]), Reply(text=["There."])]
    ask(page, "Show me the media library")
    page.wait_for_url("**/cms/admin/media")
    expect(page.get_by_role("complementary", name="Assistant")).to_be_visible()
    expect(page.locator(".bubble.user").last).to_have_text("You: Show me the media library")
    expect(page.locator(".bubble.assistant").last).to_contain_text("There.")


def test_a_key_made_by_applying_is_shown_once_with_a_copy_button(
    screens: Any, site: dict[str, Any], model: tuple[str, Script]
) -> None:
    url, script = model
    connect_through_api(site, url)
    tab: Screens = signed_in(screens, OWNER, "/cms/admin/keys")
    page = tab.page
    open_tray(page)
    page.get_by_role("button", name="New conversation").click()
    script.replies += [
        Reply(tools=[("propose_delivery_key", {"name": "Website", "types": ["article"]})]),
        Reply(text=["Apply it to get the key."]),
    ]
    ask(page, "Make a delivery key for the website")
    proposal = card(page, "delivery key")
    proposal.get_by_role("button", name="Apply").click()
    expect(proposal).to_contain_text("The new key, shown this once")
    key = proposal.locator("code.secret").inner_text()
    assert len(key) > 20
    expect(proposal.get_by_role("button", name="Copy")).to_be_visible()
    # The model never hears it, and the tray does not show it again.
    assert key not in script.everything_sent()
    page.reload()
    page.get_by_role("button", name="Assistant", exact=True).click()
    expect(card(page, "delivery key")).to_contain_text("Status: applied")
    expect(page.locator("code.secret")).to_have_count(0)
    assert key not in page.content()
