"""The all-in-one gateway process runs the SMTP daemon next to HTTP."""

from __future__ import annotations

import asyncio
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
