"""Fixtures for the mail tests.

Every request of a test happens at one ManualClock instant, so the default
rate limits (10 per second) would trip ordinary tests: they run with high
limits, and the rate-limit tests build clients with the spec's defaults.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest

from common.db import Database
from common.jobs import JobQueue
from common.runtime import Runtime
from common.settings import Settings
from gateway.app import build_app

HIGH_LIMITS = {
    "RATE_LIMIT_PER_SECOND": "100000",
    "RATE_LIMIT_BURST": "100000",
    "AUTH_RATE_LIMIT_PER_SECOND": "100000",
}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(settings, environ=MappingProxyType(dict(HIGH_LIMITS)))


@pytest.fixture
async def client(gateway_client: Any) -> Any:
    return gateway_client


@pytest.fixture
async def make_client(
    runtime: Runtime, aiohttp_client: Any
) -> AsyncIterator[Callable[..., Awaitable[Any]]]:
    """A gateway client on its own runtime (own pool and job queue) over the test database.

    ``env`` replaces the mail environment (so the spec's defaults apply unless
    given); other keyword arguments replace Settings fields.
    """
    opened: list[Database] = []

    async def make(env: dict[str, str] | None = None, **changes: Any) -> Any:
        settings = replace(runtime.settings, environ=MappingProxyType(env or {}), **changes)
        db = await Database.connect(runtime.db.dsn, size=3)
        opened.append(db)
        rt = Runtime(
            settings=settings, db=db, clock=runtime.clock, jobs=JobQueue(db, runtime.clock)
        )
        client = await aiohttp_client(build_app(rt))
        client.mail_runtime = rt
        return client

    yield make
    for db in opened:
        await db.close()


# Domains, DNS and discovery: a loopback DNS server and a Cloudflare stand-in.
# Billing: a local server speaking Stripe's wire format (tests/mail/stripe_standin.py).
from tests.mail.billing_helpers import stripe_standin  # noqa: E402, F401
from tests.mail.hosting_fixtures import cloudflare, dns_server  # noqa: E402, F401

# The sending API: the resend SDK pointed at the gateway under test.
from tests.mail.sending_helpers import sdk  # noqa: E402, F401
