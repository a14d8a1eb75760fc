"""Fixtures of the domain, DNS and discovery tests: a loopback DNS server, a
Cloudflare stand-in, and hosting settings pointing at them.

Test modules import the fixtures they use from here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from common.settings import Settings
from mail.domains.settings import HostingSettings, load_hosting_settings
from tests.mail.cloudflare_standin import PREFIX, CloudflareStandIn
from tests.mail.dns_server import DnsServer

CLOUDFLARE_TOKEN = "cf-test-token-" + "k" * 30
MAIL_HOSTNAME = "mx.mailhost.test"


@pytest.fixture
async def dns_server() -> AsyncIterator[DnsServer]:
    server = DnsServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@pytest.fixture
async def cloudflare() -> AsyncIterator[Any]:
    standin = CloudflareStandIn(CLOUDFLARE_TOKEN)
    server = TestServer(standin.app(), host="127.0.0.1")
    await server.start_server()
    standin.base_url = str(server.make_url(PREFIX))  # type: ignore[attr-defined]
    try:
        yield standin
    finally:
        await server.close()


def hosting_env(dns: DnsServer, cloudflare_url: str | None = None) -> dict[str, str]:
    env = {
        "MAIL_HOSTNAME": MAIL_HOSTNAME,
        "DNS_RESOLVERS": dns.resolver_setting,
        "DNS_TIMEOUT": "2",
    }
    if cloudflare_url:
        env["CLOUDFLARE_API_URL"] = cloudflare_url
    return env


def hosting_for(settings: Settings, env: dict[str, str]) -> HostingSettings:
    from dataclasses import replace
    from types import MappingProxyType

    return load_hosting_settings(
        replace(settings, environ=MappingProxyType({**settings.environ, **env}))
    )


@pytest.fixture
def settings(settings: Settings, dns_server: DnsServer, cloudflare: Any) -> Settings:
    """Settings whose resolvers and Cloudflare URL point at the local servers.

    Modules import this fixture to override the mail conftest's ``settings``.
    """
    from dataclasses import replace
    from types import MappingProxyType

    env = {**settings.environ, **hosting_env(dns_server, cloudflare.base_url)}
    return replace(settings, environ=MappingProxyType(env))


async def add_domain(
    client: Any, headers: dict[str, str], name: str = "example.com"
) -> dict[str, Any]:
    resp = await client.post("/api/domains", json={"name": name}, headers=headers)
    assert resp.status == 201, await resp.text()
    return await resp.json()
