"""Fixtures of the billing tests: a plans file, a Stripe stand-in, signed webhooks.

Test modules import ``settings`` (plans file, Stripe stand-in, and the hosting
env for domains and sending) and ``stripe_standin`` from here.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import stripe
from aiohttp.test_utils import TestServer

from common.settings import Settings
from tests.mail.hosting_fixtures import hosting_env
from tests.mail.stripe_standin import StripeStandIn

STRIPE_KEY = "sk_test_" + "k" * 24
WEBHOOK_SECRET = "whsec_" + "s" * 32

# starter (the default): domains and API sending, tight limits, no filters or webhooks.
# pro: paid through Stripe, everything. locked: a free plan without features.
PLANS_TOML = """
[[plans]]
id = "starter"
name = "Starter"
position = 0
default = true
[plans.features]
custom_domains = true
api_sending = true
[plans.limits]
domains = 1
addresses = 1
api_keys = 1
sends_per_month = 2
storage_bytes = 1000
webhooks = 0

[[plans]]
id = "pro"
name = "Pro"
position = 1
price = 900
currency = "eur"
stripe_price_id = "price_pro"
[plans.features]
custom_domains = true
api_sending = true
webhooks = true
transfers = true
filters = true
jmap_push = true
[plans.limits]
domains = 10
addresses = 50

[[plans]]
id = "locked"
name = "Locked"
position = 2
"""


@pytest.fixture
async def stripe_standin() -> AsyncIterator[StripeStandIn]:
    standin = StripeStandIn(STRIPE_KEY)
    server = TestServer(standin.app(), host="127.0.0.1")
    await server.start_server()
    standin.base_url = str(server.make_url("")).rstrip("/")
    try:
        yield standin
    finally:
        await server.close()


@pytest.fixture
def plans_file(tmp_path: Path) -> Path:
    path = tmp_path / "plans.toml"
    path.write_text(PLANS_TOML)
    return path


@pytest.fixture
def settings(
    settings: Settings,
    dns_server: Any,
    cloudflare: Any,
    stripe_standin: StripeStandIn,
    plans_file: Path,
) -> Settings:
    env = {
        **settings.environ,
        **hosting_env(dns_server, cloudflare.base_url),
        "PLANS_FILE": str(plans_file),
        "STRIPE_SECRET_KEY": STRIPE_KEY,
        "STRIPE_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "STRIPE_API_BASE": stripe_standin.base_url,
    }
    return replace(settings, environ=MappingProxyType(env))


def event(type_: str, obj: dict[str, Any], *, created: int, event_id: str | None = None) -> str:
    return json.dumps(
        {
            "id": event_id or f"evt_{type_.replace('.', '_')}_{created}",
            "object": "event",
            "type": type_,
            "created": created,
            "livemode": False,
            "data": {"object": obj},
        }
    )


def signed(payload: str, timestamp: int, secret: str = WEBHOOK_SECRET) -> dict[str, str]:
    """Headers as Stripe sends them, signed by the official library's scheme."""
    header = stripe.WebhookSignature.generate_signature_header(payload, secret, timestamp=timestamp)
    return {"Stripe-Signature": header, "Content-Type": "application/json; charset=utf-8"}


async def post_event(client: Any, payload: str, timestamp: int, **kw: Any) -> Any:
    return await client.post(
        "/api/webhooks/payments", data=payload.encode(), headers=signed(payload, timestamp, **kw)
    )
