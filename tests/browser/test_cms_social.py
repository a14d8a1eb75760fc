"""The CMS admin's social screens in the browser, against local stand-ins of X,
Bluesky and Mastodon (tests/content/social_standins.py) reached through the
networks' endpoint overrides: connecting an account through the consent page (a
top-level round trip, the one request allowed to leave the admin's origin),
the app secret shown as its last four characters, the composer counting each
network's limits and refusing what a network would refuse, scheduling a post
and finding it on the calendar, a partial publish and its retry, and a
connection needing attention named on the overview.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from io import BytesIO
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from aiohttp import web
from PIL import Image
from playwright.sync_api import expect

from content.social.rules import RULES, length, sent_text
from tests.browser.cms import OWNER, Cms, module_gateway, owner_api, signed_in
from tests.browser.conftest import Screens
from tests.conftest import GatewayProcess, free_port
from tests.content.social_standins import BlueskyStandIn, MastodonStandIn, XStandIn

__all__ = ["module_gateway"]  # the module-scoped fixture, used through `gateway`

DUPLICATE = "You are not allowed to create a Tweet with duplicate content."


@pytest.fixture
def gateway(module_gateway: GatewayProcess) -> GatewayProcess:
    return module_gateway


class StandIns:
    """X and Bluesky served on real ports from a thread of their own (the gateway is
    another process, and Playwright's sync API holds this thread's event loop)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.runners: list[web.AppRunner] = []
        self.x = XStandIn()
        self.bsky = BlueskyStandIn()
        self.masto = MastodonStandIn()
        self.x_url = self.serve(self.x.app())
        self.bsky_url = self.serve(self.bsky.app())
        self.masto_url = self.serve(self.masto.app())

    def serve(self, app: web.Application) -> str:
        port = free_port()

        async def start() -> None:
            runner = web.AppRunner(app)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", port).start()
            self.runners.append(runner)

        asyncio.run_coroutine_threadsafe(start(), self.loop).result(10)
        return f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        async def stop() -> None:
            for runner in self.runners:
                await runner.cleanup()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture(scope="module")
def cms(module_gateway: GatewayProcess) -> Cms:
    """The owner through the API, signed in once: sign-ins are limited to ten in 15 minutes."""
    return owner_api(module_gateway.base_url)


@pytest.fixture(scope="module")
def standins() -> Iterator[StandIns]:
    served = StandIns()
    yield served
    served.stop()


def image_bytes() -> bytes:
    buffer = BytesIO()
    Image.new("RGB", (24, 24), "green").save(buffer, "PNG")
    return buffer.getvalue()


def x_endpoints(standins: StandIns) -> dict[str, str]:
    base = standins.x_url
    return {
        "authorize": f"{base}/i/oauth2/authorize",
        "token": f"{base}/2/oauth2/token",
        "api": base,
    }


def accounts_of(cms: Cms, network: str) -> list[dict[str, Any]]:
    found = cms.call("GET", "/social/accounts")["data"]
    return next(n["accounts"] for n in found if n["network"] == network)  # type: ignore[no-any-return]


def connect_by_api(cms: Cms, gateway: GatewayProcess, standins: StandIns) -> dict[str, str]:
    """X (through its consent, followed by hand) and Bluesky (app password), working."""
    x = accounts_of(cms, "x")
    if not x or x[0]["needsAttention"]:
        body = {
            "clientId": standins.x.client_id,
            "clientSecret": standins.x.client_secret,
            "endpoints": x_endpoints(standins),
        }
        cms.call("PUT", "/social/settings/x", body)
        url = cms.call("POST", "/social/accounts/x/start", {})["url"]
        consent = httpx.get(url, follow_redirects=False)
        back = urlsplit(consent.headers["Location"])
        done = httpx.get(f"{gateway.base_url}{back.path}?{back.query}", follow_redirects=False)
        assert done.status_code == 303, done.text
    if not accounts_of(cms, "bluesky"):
        body = {
            "identifier": "site.bsky.social",
            "password": standins.bsky.password,
            "service": standins.bsky_url,
        }
        cms.call("POST", "/social/accounts/bluesky/start", body)
    return {n: accounts_of(cms, n)[0]["id"] for n in ("x", "bluesky")}


def test_connecting_x_goes_to_its_consent_and_back_and_the_secret_shows_four(
    screens: Callable[[], Screens], gateway: GatewayProcess, standins: StandIns, cms: Cms
) -> None:
    for account in accounts_of(cms, "x"):
        cms.call("DELETE", f"/social/accounts/{account['id']}", status=204)
    tab = signed_in(screens, OWNER, "/cms/admin/social/settings")
    page = tab.page
    x = page.get_by_role("region", name="X", exact=True)
    expect(x.get_by_text("No account connected.")).to_be_visible()
    expect(x.get_by_role("list").first).to_contain_text("OAuth 2.0")  # the walkthrough
    tab.check("social-settings")

    x.locator("summary", has_text="App settings").click()
    x.get_by_label("Client ID").fill(standins.x.client_id)
    x.get_by_label("Client secret").fill(standins.x.client_secret)
    x.get_by_text("Endpoint overrides").click()
    endpoints = x_endpoints(standins)
    x.get_by_label("Authorize URL override").fill(endpoints["authorize"])
    x.get_by_label("Token URL override").fill(endpoints["token"])
    x.get_by_label("API URL override").fill(endpoints["api"])
    x.get_by_role("button", name="Save the X app").click()
    expect(page.get_by_text("The X app was saved.")).to_be_visible()
    x = page.get_by_role("region", name="X", exact=True)
    # Only the secret's last four characters ever come back.
    expect(x.locator("summary", has_text="App settings")).to_contain_text("secret …abcd")
    x.locator("summary", has_text="App settings").click()
    expect(x).to_contain_text("Stored: …abcd")
    assert standins.x.client_secret not in page.content()
    assert cms.call("GET", "/social/settings")["data"][0]["source"] == "settings"

    # The consent page is the one other origin the admin goes to, by top-level navigation.
    tab.allowed.add(standins.x_url)
    x.get_by_role("button", name="Connect X").click()
    expect(page.get_by_text("The account is connected.")).to_be_visible()
    assert urlsplit(page.url).path == "/cms/admin/social/settings"
    x = page.get_by_role("region", name="X", exact=True)
    expect(x.get_by_role("list").nth(1)).to_contain_text("@oursite")
    glance = page.get_by_role("table", name="Networks at a glance")
    expect(
        glance.get_by_role("row").filter(has=page.get_by_role("link", name="X", exact=True))
    ).to_contain_text("@oursite")
    tab.allowed.discard(standins.x_url)
    tab.check("social-settings-connected")

    bsky = page.get_by_role("region", name="Bluesky", exact=True)
    for account in accounts_of(cms, "bluesky"):
        cms.call("DELETE", f"/social/accounts/{account['id']}", status=204)
    bsky.get_by_label("Handle or email").fill("site.bsky.social")
    bsky.get_by_label("App password").fill("wrong-password-here")
    bsky.get_by_label("Service address (optional)").fill(standins.bsky_url)
    bsky.get_by_role("button", name="Connect Bluesky").click()
    expect(bsky.get_by_role("alert")).to_be_visible()
    bsky.get_by_label("App password").fill(standins.bsky.password)
    bsky.get_by_role("button", name="Connect Bluesky").click()
    bsky = page.get_by_role("region", name="Bluesky", exact=True)
    expect(bsky).to_contain_text("@site.bsky.social")
    page.once("dialog", lambda dialog: dialog.accept())
    bsky.get_by_role("button", name="Disconnect Bluesky @site.bsky.social").click()
    expect(bsky.get_by_text("No account connected.")).to_be_visible()
    assert accounts_of(cms, "bluesky") == []


def test_the_composer_counts_each_networks_limit_and_a_refused_post_is_not_saved(
    screens: Callable[[], Screens],
    gateway: GatewayProcess,
    standins: StandIns,
    cms: Cms,
    tmp_path: Path,
) -> None:
    connect_by_api(cms, gateway, standins)
    before = cms.call("GET", "/social/posts")["meta"]["total"]
    tab = signed_in(screens, OWNER, "/cms/admin/social/posts/new")
    page = tab.page
    text = page.get_by_label("Text", exact=True)
    # X weighs code points (emoji 2) and counts a link as 23; Bluesky counts graphemes.
    text.fill("Tea " + "🍵" * 140)
    x = page.get_by_role("region", name="X preview")
    bsky = page.get_by_role("region", name="Bluesky preview")
    expect(x).to_contain_text("284 of 280 weighted characters")
    expect(x.get_by_role("list", name="X would refuse")).to_contain_text("at most 280")
    expect(bsky).to_contain_text("144 of 300 graphemes")
    expect(bsky).to_contain_text("Bluesky would take it.")
    tab.check("social-composer-over")

    page.get_by_role("button", name="Save as draft").click()
    expect(page.get_by_role("alert")).to_contain_text("Nothing was saved")
    expect(text).to_have_attribute("aria-invalid", "true")
    expect(page.locator(".field-error").first).to_contain_text("X: at most 280")
    assert cms.call("GET", "/social/posts")["meta"]["total"] == before

    # The page counts as the API does (content/social/rules.py is the oracle):
    # a link weighs 23 on X; a family emoji is one grapheme on Bluesky, five code points on X.
    tricky = "Read https://example.com/a/very/long/path/indeed 👨‍👩‍👧 café ñ"
    text.fill(tricky)
    expect(x).to_contain_text(f"{length(RULES['x'], tricky)} of 280 ")
    expect(bsky).to_contain_text(f"{length(RULES['bluesky'], tricky)} of 300 ")
    page.get_by_label("Link (optional)").fill("https://example.com/tea")
    sent = sent_text(RULES["x"], tricky, "https://example.com/tea")
    expect(x).to_contain_text(f"{length(RULES['x'], sent)} of 280 ")
    page.get_by_label("Link (optional)").fill("")

    # An image from the library's upload: counted against each network's media rules.
    (tmp_path / "leaves.png").write_bytes(image_bytes())
    page.locator("#social-form input[type=file]").set_input_files(str(tmp_path / "leaves.png"))
    expect(page.locator("#social-media")).to_contain_text("leaves.png (image/png)")
    expect(x).to_contain_text("1 file attached")
    text.fill("Tea " + "🍵" * 130)
    expect(x).to_contain_text("264 of 280")
    expect(x).to_contain_text("X would take it.")
    page.get_by_role("button", name="Save as draft").click()
    expect(
        page.get_by_role("region", name="Publishing")
        .get_by_role("status")
        .filter(has_text="Saved.")
    ).to_be_visible()
    page.wait_for_url("**/admin/social/posts/sp_*")
    saved = cms.call("GET", "/social/posts/" + urlsplit(page.url).path.rsplit("/", 1)[1])
    assert (len(saved["media"]), len(saved["targets"])) == (1, 2)
    expect(text).not_to_have_attribute("aria-invalid", "true")
    assert cms.call("GET", "/social/posts")["meta"]["total"] == before + 1
    tab.check("social-composer-saved")

    page.get_by_role("navigation", name="Social").get_by_role("link", name="Posts").click()
    expect(page.get_by_role("table", name="Social posts")).to_contain_text("Tea 🍵")
    page.get_by_label("Status").select_option("draft")
    expect(page.get_by_role("table", name="Social posts")).to_contain_text("draft")
    tab.check("social-posts")


def test_scheduling_a_post_puts_it_on_the_calendar(
    screens: Callable[[], Screens], gateway: GatewayProcess, standins: StandIns, cms: Cms
) -> None:
    connect_by_api(cms, gateway, standins)
    tab = signed_in(screens, OWNER, "/cms/admin/social/posts/new")
    page = tab.page
    page.get_by_label("Text", exact=True).fill("Autumn blends arrive on Friday")
    when = page.get_by_label("Send at")
    when.fill((datetime.now() - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"))
    page.get_by_role("button", name="Schedule", exact=True).click()
    expect(when).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_role("alert")).to_contain_text("Must be in the future")
    day = datetime.now() + timedelta(days=2)
    when.fill(day.strftime("%Y-%m-%dT09:30"))
    page.get_by_role("button", name="Schedule", exact=True).click()
    expect(
        page.get_by_role("region", name="Publishing")
        .get_by_role("status")
        .filter(has_text="Scheduled for")
    ).to_be_visible()
    post_id = urlsplit(page.url).path.rsplit("/", 1)[1]
    post = cms.call("GET", f"/social/posts/{post_id}")
    assert post["status"] == "scheduled"
    assert datetime.fromisoformat(post["scheduledAt"]).astimezone().strftime("%H:%M") == "09:30"
    tab.check("social-composer-scheduled")

    page.goto(f"/cms/admin/social/calendar?date={day:%Y-%m-%d}")
    grid = page.get_by_role("grid")
    link = grid.get_by_role("link", name="Autumn blends arrive on Friday")
    expect(link).to_be_visible()
    tab.check("social-calendar-week")
    # Keyboard: the day is the grid's one tab stop; Enter goes to its post, Enter opens it.
    cell = grid.locator(f"td[data-day='{day:%Y-%m-%d}']")
    cell.focus()
    page.keyboard.press("ArrowLeft")
    expect(grid.locator(f"td[data-day='{day - timedelta(days=1):%Y-%m-%d}']")).to_be_focused()
    page.keyboard.press("ArrowRight")
    expect(cell).to_be_focused()
    page.keyboard.press("Enter")
    expect(link).to_be_focused()
    page.get_by_role("button", name="Month").click()
    expect(page.get_by_role("grid").get_by_role("link", name="Autumn blends")).to_be_visible()
    tab.check("social-calendar-month")
    page.get_by_role("grid").get_by_role("link", name="Autumn blends").click()
    page.wait_for_url(f"**/admin/social/posts/{post_id}")
    page.get_by_role("button", name="Cancel the schedule").click()
    expect(
        page.get_by_role("region", name="Publishing")
        .get_by_role("status")
        .filter(has_text="draft again")
    ).to_be_visible()
    assert cms.call("GET", f"/social/posts/{post_id}")["status"] == "draft"
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete the post").click()
    page.wait_for_url("**/admin/social/posts")
    cms.call("GET", f"/social/posts/{post_id}", status=404)


def test_publishing_with_one_network_refusing_then_retrying_only_that_one(
    screens: Callable[[], Screens], gateway: GatewayProcess, standins: StandIns, cms: Cms
) -> None:
    connect_by_api(cms, gateway, standins)
    tweets, records = len(standins.x.tweets), len(standins.bsky.records)
    standins.x.fail_next(
        403, {"title": "Forbidden", "type": "about:blank", "status": 403, "detail": DUPLICATE}
    )
    tab = signed_in(screens, OWNER, "/cms/admin/social/posts/new")
    page = tab.page
    page.get_by_label("Text", exact=True).fill("The shop opens at nine tomorrow")
    page.get_by_role("button", name="Publish now").click()
    outcomes = page.get_by_role("table", name="Outcome per account")
    expect(outcomes).to_contain_text(DUPLICATE, timeout=30_000)
    expect(outcomes.get_by_role("link", name="View on Bluesky")).to_be_visible(timeout=30_000)
    expect(page.get_by_role("region", name="Publishing")).to_contain_text("partial")
    assert len(standins.bsky.records) == records + 1
    tab.check("social-post-partial")

    page.get_by_role("button", name="Retry the failed account").click()
    expect(outcomes.get_by_role("link", name="View on X")).to_be_visible(timeout=30_000)
    expect(page.get_by_role("region", name="Publishing")).to_contain_text("published")
    assert len(standins.x.tweets) == tweets + 1
    assert len(standins.bsky.records) == records + 1  # the posted target was skipped
    tab.check("social-post-published")


def test_the_overview_names_a_connection_needing_attention_and_links_to_the_fix(
    screens: Callable[[], Screens], gateway: GatewayProcess, standins: StandIns, cms: Cms
) -> None:
    accounts = connect_by_api(cms, gateway, standins)
    post = cms.call("POST", "/social/posts", {"text": "Hello", "accounts": [accounts["x"]]}, 201)
    # X revokes every token it gave: the send fails, the refresh too.
    standins.x.access.clear()
    standins.x.refresh.clear()
    cms.call("POST", f"/social/posts/{post['id']}/publish")
    tab = signed_in(screens, OWNER, "/cms/admin/social")
    page = tab.page
    attention = page.get_by_role("region", name="Connections needing attention")
    for _ in range(30):
        if accounts_of(cms, "x")[0]["needsAttention"]:
            break
        page.wait_for_timeout(500)  # the send runs on the gateway's job queue
    page.reload()
    expect(attention).to_contain_text("X @oursite needs attention")
    tab.check("social-overview")
    attention.get_by_role("link", name="Reconnect X @oursite").click()
    expect(page.locator(f"#account-{accounts['x']}")).to_be_focused()
    expect(page.locator(f"#account-{accounts['x']}")).to_contain_text("Needs attention")
    connect_by_api(cms, gateway, standins)  # the other tests' connection, working again


def test_connecting_a_mastodon_account_starts_from_its_instance_address(
    screens: Callable[[], Screens], gateway: GatewayProcess, standins: StandIns, cms: Cms
) -> None:
    tab = signed_in(screens, OWNER, "/cms/admin/social/settings#network-mastodon")
    page = tab.page
    masto = page.get_by_role("region", name="Mastodon", exact=True)
    masto.get_by_label("Instance address").fill("not an address")
    masto.get_by_role("button", name="Connect Mastodon").click()
    expect(masto.get_by_label("Instance address")).to_have_attribute("aria-invalid", "true")
    masto.get_by_label("Instance address").fill(standins.masto_url)
    tab.allowed.add(standins.masto_url)  # its consent page, by top-level navigation
    masto.get_by_role("button", name="Connect Mastodon").click()
    expect(page.get_by_text("The account is connected.")).to_be_visible()
    tab.allowed.discard(standins.masto_url)
    masto = page.get_by_role("region", name="Mastodon", exact=True)
    expect(masto.get_by_role("list").nth(1)).to_contain_text("@")
    assert len(standins.masto.apps) == 1, "the CMS registered its app on the instance"
    # Left connected, it would be ticked on the other tests' new posts.
    for account in accounts_of(cms, "mastodon"):
        cms.call("DELETE", f"/social/accounts/{account['id']}", status=204)
