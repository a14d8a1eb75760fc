"""The sending screens: API keys (token shown once), sent email with its status, suppressions."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import httpx
import psycopg2
import pytest
from aiosmtpd.controller import Controller

from tests.browser.conftest import Screens
from tests.browser.helpers import go_to_section, make_account, sign_in
from tests.conftest import GatewayProcess, free_port

OWNER = "sender@example.com"
REPLY = "250 2.0.0 accepted by the test receiver"


class Receiver:
    """The smarthost the gateway relays everything to (OUTBOUND_RELAY): records, answers 250."""

    def __init__(self) -> None:
        self.messages: list[bytes] = []

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        self.messages.append(envelope.original_content)  # type: ignore[attr-defined]
        return REPLY


@pytest.fixture
def relay() -> Iterator[tuple[Receiver, int]]:
    receiver = Receiver()
    controller = Controller(receiver, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        yield receiver, controller.port
    finally:
        controller.stop()


@pytest.fixture
def gateway_env(relay: tuple[Receiver, int]) -> dict[str, str]:
    """The browser tests' gateway, its outbound queue relaying to the loopback receiver."""
    return {"OUTBOUND_RELAY": f"127.0.0.1:{relay[1]}", "SUBMISSION_PORT": str(free_port())}


def mark_sending_records_found(database_url: str, page: object, domain_id: str) -> None:
    """What a DNS check finding the SPF and DKIM records stores (the browser test has no DNS)."""
    records = page.request.get(f"/api/domains/{domain_id}/dns").json()["records"]  # type: ignore[attr-defined]
    found = {
        f"{r['type']} {r['name'].rstrip('.')}": [r["value"]]
        for r in records
        if r["purpose"] in ("spf", "dkim")
    }
    with psycopg2.connect(database_url) as conn, conn.cursor() as cur:
        cur.execute(
            "UPDATE mail.domains SET dns_found = %s, dns_checked_at = now() WHERE id = %s",
            (json.dumps(found), domain_id),
        )
    conn.close()


def test_keys_sent_email_and_suppressions_screens(
    screens: Callable[[], Screens],
    gateway: GatewayProcess,
    database_url: str,
    relay: tuple[Receiver, int],
) -> None:
    make_account(gateway.base_url, OWNER)
    tab = screens()
    page = tab.page
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto("/api-keys")
    sign_in(tab, OWNER)
    page.wait_for_url("**/api-keys")
    page.get_by_text("No keys yet.").wait_for()
    tab.check("api-keys-empty")

    domain = page.request.post("/api/domains", data={"name": "example.com"}).json()
    mark_sending_records_found(database_url, page, domain["id"])
    page.reload()

    # A sending key held to the domain; its token is shown once, with a copy button.
    page.get_by_label("Name").fill("Production")
    page.get_by_label("Permission").select_option("sending_access")
    page.get_by_label("Domain").select_option(label="example.com")
    page.get_by_role("button", name="Create key").click()
    token_box = page.get_by_label("Your new key")
    token_box.wait_for()
    token = token_box.input_value()
    assert token.startswith("re_")
    page.get_by_role("button", name="Copy").click()
    page.get_by_role("status").filter(has_text="Cop").or_(
        page.get_by_role("status").filter(has_text="Selected")
    ).first.wait_for()
    page.get_by_role("row", name="Production").wait_for()
    tab.check("api-keys-created")
    page.reload()
    page.get_by_role("cell", name=token[:11] + "…").wait_for()
    assert token not in page.content()

    # An application sends with it: one now, one scheduled.
    api = gateway.base_url + "/api/emails"
    auth = {"Authorization": f"Bearer {token}"}
    message = {"from": "Shop <shop@example.com>", "to": "ann@example.org", "text": "Thanks!"}
    now = httpx.post(api, json={**message, "subject": "Your order"}, headers=auth)
    later = httpx.post(
        api, json={**message, "subject": "Reminder", "scheduled_at": "in 2 days"}, headers=auth
    )
    assert now.status_code == later.status_code == 200, (now.text, later.text)

    go_to_section(page, "Sent email")
    page.wait_for_url("**/emails")
    page.get_by_role("link", name="Reminder").wait_for()
    assert page.get_by_role("row", name="Reminder").get_by_text("scheduled").is_visible()
    tab.check("emails")

    page.get_by_role("link", name="Reminder").click()
    page.wait_for_url(f"**/emails/{later.json()['id']}")
    page.get_by_role("heading", name="Reminder").wait_for()
    page.get_by_role("rowheader", name="ann@example.org").wait_for()
    page.get_by_text("email.scheduled").wait_for()
    tab.check("email-scheduled")
    # Move it (the browser's local time), then cancel it: both only while scheduled.
    moved = (datetime.now() + timedelta(days=3)).replace(second=0, microsecond=0)
    page.get_by_label("Send at (your time)").fill(moved.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_role("button", name="Reschedule").click()
    page.get_by_role("status").filter(has_text="Rescheduled.").wait_for()
    got = page.request.get(f"/api/emails/{later.json()['id']}")
    assert got.json()["scheduled_at"].startswith(moved.astimezone(UTC).strftime("%Y-%m-%dT%H:%M"))
    page.get_by_role("button", name="Cancel sending").click()
    page.get_by_text("email.canceled").wait_for()
    assert page.get_by_role("button", name="Cancel sending").is_hidden()

    # The other one left through the queue: delivered, with the receiver's reply and events.
    deadline = time.monotonic() + 20
    while not relay[0].messages and time.monotonic() < deadline:
        time.sleep(0.2)  # the gateway's worker, woken by the queue's NOTIFY
    assert relay[0].messages, "the queue delivered nothing"
    page.get_by_role("link", name="All sent email").click()
    page.get_by_role("link", name="Your order").click()
    page.get_by_role("heading", name="Your order").wait_for()
    page.get_by_text("email.delivered").wait_for()
    page.get_by_role("cell", name=REPLY).wait_for()
    page.get_by_text("Thanks!").wait_for()
    tab.check("email-delivered")

    # Suppressions: add one by hand, see it, remove it.
    go_to_section(page, "Suppressions")
    page.wait_for_url("**/suppressions")
    page.get_by_text("No address is suppressed.").wait_for()
    page.get_by_label("Email address").fill("Bob@Example.org")
    page.get_by_role("button", name="Suppress").click()
    page.get_by_role("row", name="bob@example.org").wait_for()
    page.get_by_label("Email address").fill("bob@example.org")
    page.get_by_role("button", name="Suppress").click()
    page.get_by_role("alert").filter(has_text="already suppressed").wait_for()
    tab.check("suppressions")
    page.get_by_role("button", name="Remove bob@example.org").click()
    page.get_by_text("No address is suppressed.").wait_for()

    # Revoking the key stops the application at once.
    go_to_section(page, "API keys")
    page.get_by_role("button", name="Revoke Production").click()
    page.get_by_text("No keys yet.").wait_for()
    refused = httpx.post(api, json={**message, "subject": "x"}, headers=auth)
    assert refused.status_code == 403 and refused.json()["name"] == "invalid_api_key"
