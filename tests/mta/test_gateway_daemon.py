"""The all-in-one gateway process runs the SMTP daemon next to HTTP."""

from __future__ import annotations

import asyncio
import smtplib
import ssl
import urllib.request
from collections.abc import Callable
from typing import Any

from common.runtime import Runtime
from tests.conftest import free_port
from tests.mta import factories
from tests.mta.conftest import send
from tests.mta.dnsserver import LoopbackDNS


async def test_gateway_serves_smtp_on_smtp_port(
    runtime: Runtime, gateway_process: Callable[..., Any], dns_server: LoopbackDNS
) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    port = free_port()
    gateway = await asyncio.to_thread(
        gateway_process,
        env={
            "DATABASE_URL": str(runtime.settings.database_url),
            "SMTP_PORT": str(port),
            "DNS_RESOLVERS": dns_server.address,
        },
    )
    result = await send(
        port, "bob@sender.test", ["alice@example.test"], b"Subject: hi\r\n\r\nx\r\n"
    )
    assert result["data"][0] == 250
    count = await runtime.db.fetch_val(
        "SELECT count(*) FROM mta.emails WHERE address_id = %s", (owner["address_id"],)
    )
    assert count == 1
    assert "SMTP inbound listening" in gateway.log()


async def test_gateway_starts_with_submission_port_off(
    runtime: Runtime, gateway_process: Callable[..., Any], dns_server: LoopbackDNS
) -> None:
    """SUBMISSION_PORT=off (docs/mail.md) closes the STARTTLS listener; mail/ and
    mta/ read it the same way, so the gateway starts, submission is served on the
    implicit-TLS port alone, and that port is what clients are told."""
    await factories.mailbox_owner(runtime.db, "alice@example.test")
    implicit = free_port()
    gateway = await asyncio.to_thread(
        gateway_process,
        env={
            "DATABASE_URL": str(runtime.settings.database_url),
            "DNS_RESOLVERS": dns_server.address,
            "SUBMISSION_PORT": "off",
            "SUBMISSIONS_PORT": str(implicit),
        },
    )
    url = f"{gateway.base_url}/mail/config-v1.1.xml?emailaddress=alice@example.test"
    config = await asyncio.to_thread(_read, url)
    assert f"<port>{implicit}</port>" in config and "<socketType>SSL</socketType>" in config

    def greet() -> int:
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        with smtplib.SMTP_SSL("127.0.0.1", implicit, context=context, timeout=10) as client:
            return int(client.ehlo()[0])

    assert await asyncio.to_thread(greet) == 250
    assert gateway.log().count("submission listening on") == 1


def _read(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())
