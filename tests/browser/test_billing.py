"""The billing screen: plans, usage bars, subscribe through the hosted checkout and back, cancel,
a card added through setup checkout, transactions and the tax id; a Stripe stand-in on a real port."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.browser.conftest import Screens
from tests.browser.helpers import make_account, sign_in
from tests.conftest import GatewayProcess, free_port
from tests.mail.billing_helpers import PLANS_TOML, STRIPE_KEY, WEBHOOK_SECRET
from tests.mail.stripe_standin import StripeStandIn

OWNER = "payer@example.com"


@pytest.fixture
def standin() -> Iterator[StripeStandIn]:
    """The stand-in on its own loop and thread: the gateway is another process."""
    fake = StripeStandIn(STRIPE_KEY)
    port = free_port()
    fake.base_url = f"http://127.0.0.1:{port}"
    fake.hosted_base = f"{fake.base_url}/pay"
    fake.webhook_secret = WEBHOOK_SECRET
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(fake.app())
    ready = threading.Event()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield fake
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


@pytest.fixture
def gateway_env(standin: StripeStandIn, tmp_path: Path) -> dict[str, str]:
    plans = tmp_path / "plans.toml"
    plans.write_text(PLANS_TOML)
    return {
        "PLANS_FILE": str(plans),
        "STRIPE_SECRET_KEY": STRIPE_KEY,
        "STRIPE_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "STRIPE_API_BASE": standin.base_url,
    }


def test_billing_screens(
    screens: Callable[[], Screens], gateway: GatewayProcess, standin: StripeStandIn
) -> None:
    standin.webhook_url = gateway.base_url + "/api/webhooks/payments"
    make_account(gateway.base_url, OWNER)
    tab = screens()
    tab.allowed.add(standin.base_url)
    page = tab.page
    page.on("dialog", lambda dialog: dialog.accept())
    page.goto("/billing")
    sign_in(tab, OWNER)
    page.wait_for_url("**/billing")
    page.get_by_role("heading", name="Your plan").wait_for()
    page.get_by_text("Starter", exact=True).first.wait_for()
    # Usage bars, one per limit, labelled.
    domains_bar = page.get_by_label("Domains")
    domains_bar.wait_for()
    assert domains_bar.get_attribute("max") == "1"
    page.request.post("/api/domains", data={"name": "example.com"})
    page.reload()
    page.get_by_text("1 of 1").first.wait_for()
    assert page.get_by_label("Domains").evaluate("el => el.value") == 1
    tab.check("billing-starter")

    # Subscribe: the hosted checkout (the stand-in's page) and back; its webhook moved the plan.
    page.get_by_role("button", name="Choose the Pro plan").click()
    page.wait_for_url("**/billing/return?session_id=cs_test_*")
    page.get_by_text("You are on the Pro plan.").wait_for()
    tab.check("billing-return")
    page.get_by_role("link", name="Back to billing").click()
    page.wait_for_url("**/billing")
    page.get_by_text("Renews on").wait_for()
    tab.check("billing-pro")

    # Cancel: still active until the period ends.
    page.get_by_role("button", name="Cancel subscription").click()
    page.get_by_text("Cancelled: active until").wait_for()
    (sub,) = standin.subscriptions.values()
    assert sub["cancel_at_period_end"] is True

    # A card through the setup checkout; then the tax id, refused then saved.
    page.get_by_role("button", name="Add a card").click()
    page.wait_for_url("**/billing/return?session_id=*")
    page.get_by_role("link", name="Back to billing").click()
    page.get_by_role("rowheader", name="visa •••• 4242").wait_for()
    page.get_by_label("Number").fill("x1")
    page.get_by_role("button", name="Save tax id").click()
    page.get_by_role("alert").filter(has_text="not a valid eu_vat").wait_for()
    page.get_by_label("Number").fill("de123456789")
    page.get_by_role("button", name="Save tax id").click()
    page.get_by_role("status").filter(has_text="Saved.").wait_for()
    assert page.get_by_label("Number").input_value() == "DE123456789"
    page.get_by_text("No invoice or charge yet.").wait_for()
    tab.check("billing-cancelled-card-tax")

    # The Overview shows the same plan and usage (one entitlement function).
    page.goto("/")
    page.locator("#overview-plan").filter(has_text="Pro").wait_for()
    bar = page.get_by_role("progressbar", name="domains")
    bar.wait_for()
    assert bar.get_attribute("max") == "10"

    # Checkout abandoned: the page says nothing changed.
    page.goto("/billing?checkout=cancelled")
    page.get_by_text("Checkout was cancelled: nothing changed.").wait_for()
    assert not tab.problems, tab.problems
