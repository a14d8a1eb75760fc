"""End to end: the sending API (resend SDK, through the gateway) -> the outbound queue ->
a real receiving SMTP server on loopback found through MX -> GET shows what happened."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import authheaders
import dns.exception
import dns.resolver
import pytest
import resend

from common.runtime import Runtime
from mta.context import MtaContext
from mta.outbound.worker import OutboundWorker
from mta.settings import MtaSettings
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import settings  # noqa: F401
from tests.mail.sending_helpers import api_key, sending_domain
from tests.mta import sending
from tests.mta.sending import ReceiverHandler

MESSAGE = {
    "from": "Acme <hello@example.com>",
    "to": ["ann@example.org"],
    "subject": "Your receipt",
    "text": "Thank you for your order.",
    "tags": [{"name": "kind", "value": "receipt"}],
}


@pytest.fixture
async def remote(dns_server: Any) -> AsyncIterator[tuple[ReceiverHandler, int]]:
    """A receiving server for example.org, found through its MX on the loopback DNS."""
    async with sending.receiver() as (handler, port):
        dns_server.add("example.org", "MX", "10 mx.example.org.")
        dns_server.add("mx.example.org", "A", "127.0.0.1")
        yield handler, port


@pytest.fixture
async def worker(
    runtime: Runtime, dns_server: Any, remote: tuple[ReceiverHandler, int]
) -> AsyncIterator[OutboundWorker]:
    config = MtaSettings(
        smtp_hostname="mx.mailhost.test",
        dns_resolvers=(dns_server.nameserver,),
        dns_timeout=2.0,
        # The MX port override for a loopback receiver (a test setting).
        outbound_smtp_port=remote[1],
        outbound_retry_schedule=(60, 300),
        mta_sts=False,
    )
    w = OutboundWorker(MtaContext.build(runtime, config))
    yield w
    await w.close()


def dkim_verdict(dns_server: Any, data: bytes) -> str:
    """authheaders (not dkimpy's signer path) verifies, reading keys from the loopback DNS."""
    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers = ["127.0.0.1"]
    resolver.port = dns_server.port

    def txt(name: bytes | str, timeout: float = 5) -> bytes:
        name = name.decode() if isinstance(name, bytes) else name
        try:
            answer = resolver.resolve(name.rstrip("."), "TXT")
        except dns.exception.DNSException:
            return b""
        return b"".join(b"".join(r.strings) for r in answer)

    return str(
        authheaders.authenticate_message(data, "receiver.test", dkim=True, dmarc=False, dnsfunc=txt)
    )


async def test_api_send_is_delivered_signed_and_reported(
    client, runtime, dns_server, sdk, remote, worker
):
    handler, _ = remote
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    sent = await sdk(key, resend.Emails.send, MESSAGE)

    assert await worker.drain() == 1
    [got] = handler.messages
    assert got.rcpts == ["ann@example.org"]
    assert got.message["Subject"] == "Your receipt"
    assert got.message["Message-ID"] == f"<{sent['id']}@example.com>"
    # Signed with the domain's active key, whose record the DNS check found.
    # In a thread: the loopback DNS server answers on this test's event loop.
    verdict = await asyncio.to_thread(dkim_verdict, dns_server, got.data)
    assert "dkim=pass" in verdict and "header.d=example.com" in verdict
    tampered = got.data.replace(b"Thank you", b"Thank nobody")
    assert "dkim=fail" in await asyncio.to_thread(dkim_verdict, dns_server, tampered)

    email = await sdk(key, resend.Emails.get, sent["id"])
    assert email["last_event"] == "delivered"
    [rcpt] = email["recipients"]
    assert (rcpt["email"], rcpt["status"], rcpt["attempts"]) == ("ann@example.org", "delivered", 1)
    assert rcpt["last_reply"].startswith("250")
    assert [e["type"] for e in email["events"]] == ["email.sent", "email.delivered"]
    delivered = email["events"][1]["data"]
    assert delivered["email_id"] == sent["id"] and delivered["to"] == ["ann@example.org"]
    assert delivered["tags"] == {"kind": "receipt"}
    listed = await sdk(key, resend.Emails.list)
    assert listed["data"][0]["last_event"] == "delivered"


async def test_a_hard_bounce_is_reported_and_suppressed(
    client, runtime, dns_server, sdk, remote, worker
):
    handler, _ = remote
    handler.rcpt_replies["ann@example.org"] = ["550 5.1.1 no such user"]
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    sent = await sdk(key, resend.Emails.send, MESSAGE)
    await worker.drain()

    email = await sdk(key, resend.Emails.get, sent["id"])
    assert email["last_event"] == "bounced"
    [rcpt] = email["recipients"]
    assert rcpt["status"] == "bounced" and "no such user" in rcpt["last_reply"]
    assert "email.bounced" in [e["type"] for e in email["events"]]

    # The address is on the account's suppression list, saying why and which email.
    listed = await (await client.get("/api/suppressions", headers=headers)).json()
    [entry] = listed["data"]
    assert (entry["email"], entry["origin"], entry["source_id"]) == (
        "ann@example.org", "bounce", sent["id"],
    )  # fmt: skip
    # The next email to it is not attempted.
    again = await sdk(key, resend.Emails.send, MESSAGE)
    assert await worker.drain() == 0
    email = await sdk(key, resend.Emails.get, again["id"])
    assert [r["status"] for r in email["recipients"]] == ["suppressed"]
