"""The webhooks screens (secret shown once, test, rotate, events, replay) and the overview's data.

The receiver is a real HTTP server on loopback (so the gateway runs with
WEBHOOK_ALLOW_PRIVATE); what it gets is verified with the `standardwebhooks`
library, using the secret as the page showed it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from playwright.sync_api import expect
from standardwebhooks.webhooks import Webhook as ReferenceVerifier
from standardwebhooks.webhooks import WebhookVerificationError

from tests.browser.conftest import Screens
from tests.browser.helpers import go_to_section, signed_in_tab
from tests.conftest import GatewayProcess

EMAIL = "hooks@example.com"


@pytest.fixture
def gateway_env() -> dict[str, str]:
    return {"WEBHOOK_ALLOW_PRIVATE": "true"}


class Received:
    def __init__(self) -> None:
        self.requests: list[tuple[dict[str, str], bytes]] = []
        self.lock = threading.Lock()

    def last(self) -> tuple[dict[str, str], bytes]:
        with self.lock:
            return self.requests[-1]


@pytest.fixture
def receiver() -> Iterator[tuple[Received, str]]:
    got = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with got.lock:
                got.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"thanks, got it")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield got, f"http://127.0.0.1:{server.server_address[1]}/hooks/mail"
    finally:
        server.shutdown()
        server.server_close()


def verify(secret: str, request: tuple[dict[str, str], bytes]) -> dict[str, Any]:
    headers, body = request
    payload = ReferenceVerifier(secret).verify(body, headers)
    assert isinstance(payload, dict)
    return payload


def test_a_webhook_is_created_tested_rotated_and_its_event_replayed(
    screens: Callable[[], Screens], gateway: GatewayProcess, receiver: tuple[Received, str]
) -> None:
    got, url = receiver
    tab = signed_in_tab(screens, gateway.base_url, EMAIL)
    page = tab.page
    go_to_section(page, "Webhooks")
    page.wait_for_url("**/webhooks")
    page.get_by_text("No webhooks yet.").wait_for()
    tab.check("webhooks-empty")

    page.get_by_role("link", name="New webhook").click()
    page.wait_for_url("**/webhooks/new")
    page.get_by_label("Endpoint URL").fill("http://")
    page.get_by_role("button", name="Create webhook").click()
    expect(page.locator("#webhook-error")).to_contain_text("Endpoint")
    tab.check("webhook-new-error")
    page.get_by_label("Endpoint URL").fill(url)
    page.get_by_label("Description").fill("The shop's backend")
    page.get_by_label("email.received").uncheck()
    page.get_by_role("button", name="Create webhook").click()
    secret_box = page.locator("#secret-value")
    secret_box.wait_for()
    secret = secret_box.inner_text()
    assert secret.startswith("whsec_")
    tab.check("webhook-created-secret")

    page.get_by_role("link", name="Go to the webhook").click()
    page.wait_for_url("**/webhooks/*")
    expect(page.locator("#secret-hint")).to_have_text(secret[:10] + "…")
    # Never shown again: not in the page, not in what the page read.
    assert secret not in page.content()
    assert not page.get_by_label("email.received").is_checked()
    assert page.get_by_label("domain.created").is_checked()
    tab.check("webhook-edit")

    page.get_by_label("Sample event").select_option("email.bounced")
    page.get_by_role("button", name="Send a test").click()
    expect(page.locator("#test-status")).to_contain_text("answered 200")
    expect(page.locator("#test-answer")).to_have_text("thanks, got it")
    assert verify(secret, got.last())["type"] == "email.bounced"
    tab.check("webhook-tested")

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Rotate the secret").click()
    page.locator("#secret-box").wait_for(state="visible")
    rotated = page.locator("#secret-value").inner_text()
    assert rotated.startswith("whsec_") and rotated != secret
    page.get_by_role("button", name="Send a test").click()
    expect(page.locator("#test-status")).to_contain_text("answered 200")
    with pytest.raises(WebhookVerificationError):
        verify(secret, got.last())
    verify(rotated, got.last())

    # A real event: the gateway's workers fan it out and deliver it.
    made = page.request.post("/api/domains", data={"name": "shop.example"})
    assert made.status == 201
    event_link = page.get_by_role("link", name="domain.created")
    for _ in range(50):
        page.reload()
        page.wait_for_load_state("networkidle")
        if "Delivered" in page.locator("#events-list").inner_text():
            break
        page.wait_for_timeout(200)
    expect(page.locator("#events-list")).to_contain_text("Delivered")
    payload = verify(rotated, got.last())
    assert payload["type"] == "domain.created" and payload["data"]["name"] == "shop.example"
    event_link.click()
    page.wait_for_url("**/events/*")
    expect(page.locator("#payload")).to_contain_text('"name": "shop.example"')
    expect(page.locator("#attempts tr")).to_have_count(1)
    tab.check("webhook-event")
    before = len(got.requests)
    page.get_by_role("button", name="Send it again").click()
    expect(page.locator("#replay-status")).to_contain_text("answered 200")
    expect(page.locator("#attempts tr")).to_have_count(2)
    expect(page.locator("#attempts")).to_contain_text("Sent again")
    assert len(got.requests) == before + 1
    assert json.loads(got.last()[1]) == payload
    tab.check("webhook-event-replayed")

    page.get_by_role("link", name="Back to the webhook").click()
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete this webhook").click()
    page.wait_for_url("**/webhooks")
    page.get_by_text("No webhooks yet.").wait_for()


def test_the_overview_shows_mail_storage_and_what_needs_attention(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    tab = signed_in_tab(screens, gateway.base_url, "overview@example.com")
    page = tab.page
    # An endpoint that cannot be reached (nothing listens on port 9 of loopback).
    page.request.post("/api/webhooks", data={"endpoint": "http://127.0.0.1:9/x"})
    made = page.request.post("/api/domains", data={"name": "overview.example"})
    assert made.status == 201
    domain_id = made.json()["id"]
    for local in ("ada", "bob"):
        address = page.request.post(
            f"/api/domains/{domain_id}/addresses",
            data={"local_part": local, "password": "a mailbox passphrase", "quota_bytes": 10**9},
        )
        assert address.status == 201
    page.goto("/")
    expect(page.locator("#count-addresses")).to_have_text("2")
    expect(page.locator("#count-domains")).to_have_text("1")
    expect(page.locator("#storage-used")).to_have_text("0 B of 2.0 GB")
    expect(page.locator("#overview-domains")).to_contain_text("overview.example")
    expect(page.locator("#overview-activity")).to_contain_text("address.created")
    expect(page.locator("#mail-chart svg rect")).to_have_count(60)
    page.get_by_text("The numbers per day").click()
    expect(page.locator("#mail-days tr")).to_have_count(30)
    # The endpoint fails once the workers tried it; the overview says so.
    for _ in range(50):
        page.reload()
        page.wait_for_load_state("networkidle")
        if page.locator("#overview-failing li").count():
            break
        page.wait_for_timeout(200)
    expect(page.locator("#overview-failing")).to_contain_text("127.0.0.1:9")
    tab.check("overview-data")
