"""The product's own screens stay inside the API's rate limit (docs/mail.md, "Rate limits").

The gateway runs with the spec's limits (10 requests a second per principal,
sign-in 5 a second per IP), not the high ones the other browser tests use. A
person signs in, opens the filter screen of an account with a dozen domains,
and walks webmail with the keyboard (j/k/o through several messages, a
reload, again): the network log must hold no 429, and the page's own API
calls per screen are counted (printed, and bounded by the burst).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg2
import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Screens
from tests.browser.helpers import sign_in
from tests.browser.test_sending import Receiver, relay  # noqa: F401
from tests.browser.test_webmail import ADDRESS, SMTP_PORT, browser, deliver, make_mailbox  # noqa: F401
from tests.conftest import GatewayProcess, free_port
from tests.mail.factories import PASSWORD, PASSWORD_HASH

OWNER = "owner@panel.test"  # make_mailbox's panel account
DOMAINS = 12
MESSAGES = 8
BURST = 20  # RATE_LIMIT_BURST's default (mail/settings.py)


@pytest.fixture
def gateway_env(relay: tuple[Receiver, int]) -> dict[str, str]:  # noqa: F811
    # test_webmail's mail host, with the spec's limits and the burst at its default.
    return {
        "OUTBOUND_RELAY": f"127.0.0.1:{relay[1]}",
        "SMTP_ENABLED": "true",
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": str(SMTP_PORT),
        "SMTP_AUTH_CHECKS": "false",
        "SUBMISSION_PORT": str(free_port()),
        "RATE_LIMIT_PER_SECOND": "10",
        "AUTH_RATE_LIMIT_PER_SECOND": "5",
    }


@dataclass
class NetworkLog:
    """Every response the tab saw (its frames too), and the API calls by screen."""

    refused: list[str] = field(default_factory=list)
    api_calls: list[str] = field(default_factory=list)

    def on_response(self, response: Any) -> None:
        path = response.url.split("//", 1)[1].split("/", 1)[1]
        if response.status == 429:
            self.refused.append(f"{response.request.method} /{path}")
        if path.startswith("api/"):
            self.api_calls.append(f"{response.request.method} /{path.split('?')[0]}")

    def take(self) -> list[str]:
        calls, self.api_calls = self.api_calls, []
        return calls


def more_domains(database_url: str) -> None:
    """Eleven more domains with an address each for make_mailbox's account: twelve in all.

    Written straight to the database: the setup is not what is measured.
    """
    with psycopg2.connect(database_url) as conn, conn.cursor() as cur:
        cur.execute("SELECT id FROM mail.accounts WHERE email = %s", (OWNER,))
        account_id = cur.fetchone()[0]  # type: ignore[index]
        for n in range(1, DOMAINS):
            cur.execute(
                "INSERT INTO mail.domains (account_id, name, created_at, updated_at)"
                " VALUES (%s, %s, now(), now()) RETURNING id",
                (account_id, f"d{n:02}-{secrets.token_hex(2)}.example"),
            )
            domain_id = cur.fetchone()[0]  # type: ignore[index]
            cur.execute(
                "INSERT INTO mail.addresses (domain_id, local_part, password_hash,"
                " created_at, updated_at) VALUES (%s, 'ann', %s, now(), now())",
                (domain_id, PASSWORD_HASH),
            )
    conn.close()


@pytest.fixture
def network(screens: Callable[[], Screens]) -> Iterator[tuple[Screens, NetworkLog]]:
    tab = screens()
    log = NetworkLog()
    tab.page.on("response", log.on_response)
    yield tab, log


def reading(page: Any, number: int) -> None:
    """Waits until the reading pane shows message ``number``."""
    page.frame_locator("#read-body").get_by_text(f"Body of message {number}.").wait_for()


def test_filters_and_webmail_by_keyboard_meet_no_429(
    network: tuple[Screens, NetworkLog], gateway: GatewayProcess, database_url: str
) -> None:
    tab, log = network
    page = tab.page
    make_mailbox(database_url)
    more_domains(database_url)
    # Delivered oldest first: the list shows message 8 on top.
    for n in range(1, MESSAGES + 1):
        deliver(f"Message {n}", f"Body of message {n}.")
    counts: dict[str, int] = {}

    page.goto("/signin")
    sign_in(tab, OWNER, password=PASSWORD)
    page.wait_for_url(tab.origin + "/")
    page.wait_for_load_state("networkidle")
    counts["sign in, then the overview"] = len(log.take())

    page.goto("/filters/new")
    page.wait_for_load_state("networkidle")
    picker = page.get_by_label("Address")
    labels = picker.locator("option").all_inner_texts()
    assert len(labels) == DOMAINS + 1 and ADDRESS in labels, labels
    picker.select_option(label=ADDRESS)
    page.get_by_label("Name").fill("Newsletters")
    page.get_by_label("Sieve script").fill('require "fileinto";\nfileinto "Newsletters";\n')
    page.locator("#script-ok").wait_for()
    counts["the filter editor, 12 domains"] = len(log.take())
    page.get_by_role("button", name="Save filter").click()
    page.wait_for_url("**/filters/*?saved=1")
    page.get_by_text("Saved Newsletters.").wait_for()
    page.wait_for_load_state("networkidle")
    counts["save, then the saved filter"] = len(log.take())
    page.goto("/filters")
    page.get_by_role("link", name="Newsletters").wait_for()
    page.wait_for_load_state("networkidle")
    counts["the filter list"] = len(log.take())

    page.goto("/webmail")
    page.get_by_label("Email address").fill(ADDRESS)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Message 8").wait_for()
    page.locator("body[data-live='ready']").wait_for()
    counts["webmail sign-in"] = len(log.take())

    for walk in ("first", "after a reload"):
        page.locator("#messages").focus()
        page.keyboard.press("o")
        reading(page, 8)
        # Down the list as fast as the keys go, then back up: 8 -> 2 -> 5.
        for key in "jjjjjj":
            page.keyboard.press(key)
        reading(page, 2)
        for key in "kkk":
            page.keyboard.press(key)
        reading(page, 5)
        page.keyboard.press("o")
        page.wait_for_load_state("networkidle")
        counts[f"webmail: o, 6 j, 3 k, o ({walk})"] = len(log.take())
        # What was shown is marked seen (together, in one request), in the list and
        # in the Inbox's count; what j/k only passed over stays unread.
        for n in (8, 2, 5):
            row = page.locator("#messages li", has=page.get_by_role("button", name=f"Message {n}"))
            expect(row).not_to_have_class("unread")
        unread = page.locator("#messages li.unread")
        expect(page.locator("#folders a[aria-current] .count")).to_have_text(str(unread.count()))
        if walk == "first":
            page.reload()
            page.get_by_role("button", name="Message 8").wait_for()
            page.locator("body[data-live='ready']").wait_for()
            page.wait_for_load_state("networkidle")
            counts["webmail reload"] = len(log.take())

    # Read, then gone at once (a reload before the pause): still marked seen.
    page.get_by_role("button", name="Message 1").click()
    reading(page, 1)
    page.reload()
    page.get_by_role("button", name="Message 1").wait_for()
    first = page.locator("#messages li", has=page.get_by_role("button", name="Message 1"))
    expect(first).not_to_have_class("unread")

    for screen, calls in counts.items():
        print(f"API calls, {screen}: {calls}")
    assert not log.refused, log.refused
    # No screen's load comes near the burst.
    assert max(counts.values()) < BURST, counts


def test_sign_in_without_its_script_lands_on_a_page_not_json(
    screens: Callable[[], Screens], gateway: GatewayProcess, database_url: str
) -> None:
    """The script did not load (here: every module refused): the form posts natively."""
    make_mailbox(database_url)
    tab = screens()
    page = tab.page
    page.route("**/*.js", lambda route: route.abort())
    page.goto("/signin?next=/filters")
    sign_in(tab, OWNER, password=PASSWORD)
    page.get_by_role("heading", name="This page did not finish loading").wait_for()
    assert "application/json" not in page.content()
    assert "Nothing was changed" in page.inner_text("main")
    tab.check("signin-without-script")
    page.unroute("**/*.js")
    # Back to the page it came from; with its script this time, the sign-in works.
    page.get_by_role("link", name="Back to the page").click()
    page.wait_for_url("**/signin?next=/filters")
    sign_in(tab, OWNER, password=PASSWORD)
    page.wait_for_url("**/filters")
