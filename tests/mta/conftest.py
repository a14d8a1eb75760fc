"""The inbound daemon running in the test's event loop, against a loopback DNS."""

from __future__ import annotations

import asyncio
import smtplib
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import aiosmtplib
import pytest

from common.runtime import Runtime
from common.settings import Settings
from mta.context import MtaContext
from mta.settings import MtaSettings
from mta.smtp import server
from tests.mta.dnsserver import LoopbackDNS

MAX_SIZE = 200_000


def mta_settings(settings: Settings) -> Settings:
    # Panel route tests make many requests within one frozen clock second.
    return replace(
        settings,
        environ=MappingProxyType(
            {"RATE_LIMIT_PER_SECOND": "100000", "AUTH_RATE_LIMIT_PER_SECOND": "100000"}
        ),
    )


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return mta_settings(settings)


@pytest.fixture
def dns_server() -> Iterator[LoopbackDNS]:
    srv = LoopbackDNS().start()
    try:
        yield srv
    finally:
        srv.stop()


def mta_test_config(dns_server: LoopbackDNS) -> MtaSettings:
    return MtaSettings(
        smtp_host="127.0.0.1",
        smtp_port=0,
        smtp_hostname="mx.test",
        max_message_size=MAX_SIZE,
        dns_resolvers=(dns_server.nameserver,),
        dns_timeout=2.0,
    )


@pytest.fixture
def mta_config(dns_server: LoopbackDNS) -> MtaSettings:
    return mta_test_config(dns_server)


@pytest.fixture
def mta_ctx(runtime: Runtime, mta_config: MtaSettings) -> MtaContext:
    return MtaContext.build(runtime, mta_config)


@pytest.fixture
async def smtp_port(mta_ctx: MtaContext) -> AsyncIterator[int]:
    async with server.serve(mta_ctx) as srv:
        yield server.bound_port(srv)


def with_config(ctx: MtaContext, **changes: Any) -> MtaContext:
    return replace(ctx, config=replace(ctx.config, **changes))


def smtplib_send(
    port: int, mail_from: str, rcpts: list[str], message: bytes, **options: Any
) -> dict[str, Any]:
    """Send with the standard library's client; returns refused recipients and the DATA reply."""
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
        client.ehlo("client.test")
        code, msg = client.mail(mail_from, options.get("mail_options", []))
        if code != 250:
            return {"mail": (code, msg.decode())}
        refused = {}
        accepted = []
        for rcpt in rcpts:
            code, msg = client.rcpt(rcpt)
            if code == 250:
                accepted.append(rcpt)
            else:
                refused[rcpt] = (code, msg.decode())
        if not accepted:
            client.rset()
            return {"refused": refused, "data": None}
        code, msg = client.data(message)
        return {"refused": refused, "data": (code, msg.decode())}


async def send(port: int, mail_from: str, rcpts: list[str], message: bytes, **kw: Any) -> Any:
    return await asyncio.to_thread(smtplib_send, port, mail_from, rcpts, message, **kw)


@asynccontextmanager
async def smtp_client(port: int) -> AsyncIterator[aiosmtplib.SMTP]:
    """An aiosmtplib client that has said EHLO; QUIT on the way out."""
    client = aiosmtplib.SMTP(hostname="127.0.0.1", port=port, start_tls=False)
    await client.connect()
    try:
        await client.ehlo(hostname="client.test")
        yield client
    finally:
        await client.quit()
