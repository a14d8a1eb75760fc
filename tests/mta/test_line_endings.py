"""Bare LF and bare CR (RFC 5321 2.3.8) at each door, and what the DKIM signer signs.

Inbound refuses them (550 5.5.2, Postfix's smtpd_forbid_bare_newline=reject);
submission makes every line end CRLF; the signer signs the CRLF form the
outbound client sends, so a message the queue holds with Unix line ends still
leaves with a signature that verifies, over every header of its list.
Verified at the far side with authheaders (not our signing code).
"""

from __future__ import annotations

import asyncio
import smtplib
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from common.db import Database
from common.runtime import Runtime
from mta import mailstore
from mta.context import MtaContext
from mta.outbound.signer import SIGNED_HEADERS, header_list
from mta.outbound.worker import OutboundWorker
from mta.smtp import replies
from tests.mta import factories, sending
from tests.mta.conftest import send
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.sending import ReceiverHandler, Sender
from tests.mta.test_outbound_delivery import dkim_verify
from tests.mta.test_smtp_protocol_daemon import stored
from tests.mta.test_submission import (  # noqa: F401
    client_tls,
    ports,
    submission_config,
    submission_ctx,
)

# Every field of the signer's list, each line ended by a bare LF (a Unix script's message).
LF_MESSAGE = (
    b"From: Alice <alice@example.test>\n"
    b"To: Bob <bob@remote.test>\n"
    b"Cc: carol@remote.test\n"
    b"Subject: Figures, with Unix line ends\n"
    b"Date: Mon, 01 Jan 2030 12:00:00 +0000\n"
    b"Message-ID: <lf1@example.test>\n"
    b"MIME-Version: 1.0\n"
    b"Content-Type: text/plain; charset=utf-8\n"
    b"Content-Transfer-Encoding: 7bit\n"
    b"Reply-To: alice@example.test\n"
    b"In-Reply-To: <q0@remote.test>\n"
    b"References: <q0@remote.test>\n"
    b"\n"
    b"Line one.\n"
    b"Line two.\n"
)
EVERY_FIELD = [*SIGNED_HEADERS, "from"]


@pytest.fixture
async def remote(dns_server: LoopbackDNS) -> AsyncIterator[tuple[ReceiverHandler, int]]:
    async with sending.receiver() as (handler, port):
        sending.mx(dns_server, "remote.test")
        yield handler, port


@pytest.fixture
async def alice(runtime: Runtime, dns_server: LoopbackDNS) -> Sender:
    sender = await sending.hosted_sender(runtime.db)
    await sending.dkim_key(runtime, dns_server, sender, "rsa-sha256", "lf2030")
    return sender


async def relay(ctx: MtaContext, port: int) -> None:
    worker = OutboundWorker(replace(ctx, config=replace(ctx.config, outbound_smtp_port=port)))
    try:
        assert await worker.drain() >= 1
    finally:
        await worker.close()


def signed_fields(data: bytes) -> list[str]:
    head = data.split(b"\r\n\r\n", 1)[0].decode()
    signature = head.split("DKIM-Signature:", 1)[1]
    tag = signature.split("h=", 1)[1].split(";", 1)[0]
    return "".join(tag.split()).split(":")


def assert_verifies_over_every_field(dns_server: LoopbackDNS, data: bytes) -> None:
    assert b"\n" not in data.replace(b"\r\n", b"")  # CRLF only, on the wire
    verdict = dkim_verify(dns_server, data)
    assert "dkim=pass" in verdict and "header.d=example.test" in verdict
    assert signed_fields(data) == EVERY_FIELD
    assert "dkim=fail" in dkim_verify(dns_server, data.replace(b"Line two", b"Line 2"))


def test_the_header_list_is_the_same_for_any_line_ends() -> None:
    crlf = LF_MESSAGE.replace(b"\n", b"\r\n")
    assert [h.decode() for h in header_list(LF_MESSAGE)] == EVERY_FIELD
    assert header_list(crlf) == header_list(LF_MESSAGE) == header_list(crlf.replace(b"\r\n", b"\r"))
    # A folded continuation line that looks like a field is not one.
    folded = b"From: a@example.test\nSubject: one\n to: not a field\n\nbody\n"
    assert header_list(folded) == [b"from", b"subject", b"from"]


@pytest.mark.parametrize(("ending", "kind"), [(b"\n", "LF"), (b"\r", "CR")])
async def test_inbound_refuses_bare_line_ends_and_stores_nothing(
    db: Database, mta_ctx: MtaContext, smtp_port: int, ending: bytes, kind: str
) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    head = b"From: bob@sender.test\r\nSubject: hi\r\n\r\nfirst"
    message = head + ending + b"second\r\n"
    result = await send(smtp_port, "bob@sender.test", ["alice@example.test"], message)
    code, text = result["data"]
    assert f"{code} {text}" == replies.bare_line_end(kind)
    assert await stored(db, mta_ctx, owner) == []
    # The same message with CRLF is stored.
    fixed = head + b"\r\nsecond\r\n"
    result = await send(smtp_port, "bob@sender.test", ["alice@example.test"], fixed)
    assert result["data"][0] == 250
    assert len(await stored(db, mta_ctx, owner)) == 1


async def test_submission_makes_bare_lf_crlf_and_the_relayed_message_verifies(
    runtime: Runtime,
    submission_ctx: MtaContext,  # noqa: F811
    ports: tuple[int, int],  # noqa: F811
    alice: Sender,
    remote: tuple[ReceiverHandler, int],
    dns_server: LoopbackDNS,
) -> None:
    def run() -> Any:
        with smtplib.SMTP("127.0.0.1", ports[0], timeout=10) as client:
            client.starttls(context=client_tls())
            client.login(alice.email, alice.password)
            # Bytes go as given: smtplib only fixes the line ends of a str.
            return client.sendmail(alice.email, ["bob@remote.test"], LF_MESSAGE)

    assert await asyncio.to_thread(run) == {}
    raw = await runtime.db.fetch_val("SELECT raw FROM mta.outbound_messages")
    assert b"\n" not in bytes(raw).replace(b"\r\n", b"")  # queued as standard mail

    handler, port = remote
    await relay(submission_ctx, port)
    [got] = handler.messages
    assert got.message["Subject"] == "Figures, with Unix line ends"
    assert_verifies_over_every_field(dns_server, got.data)


async def test_a_queued_message_with_bare_lf_is_signed_as_it_is_sent(
    runtime: Runtime,
    mta_ctx: MtaContext,
    alice: Sender,
    remote: tuple[ReceiverHandler, int],
    dns_server: LoopbackDNS,
) -> None:
    """What reaches the signer may have Unix line ends (a JMAP client's uploaded
    draft, a redirected message): the signature covers what the far side gets."""
    async with runtime.db.transaction() as conn:
        await mailstore.enqueue(
            conn,
            message_id=str(uuid.uuid4()),
            account_id=alice.account_id,
            source="jmap",
            mail_from=alice.email,
            recipients=["bob@remote.test"],
            raw=LF_MESSAGE,
            now=runtime.clock.now(),
        )
    handler, port = remote
    await relay(mta_ctx, port)
    [got] = handler.messages
    assert_verifies_over_every_field(dns_server, got.data)


async def test_a_message_smuggled_behind_bare_lf_does_not_leave_as_a_second_message(
    runtime: Runtime,
    submission_ctx: MtaContext,  # noqa: F811
    ports: tuple[int, int],  # noqa: F811
    alice: Sender,
    remote: tuple[ReceiverHandler, int],
) -> None:
    """The 2023 smuggling pattern: <LF>.<LF> then commands. DATA ends only at
    <CRLF>.<CRLF>; what the repair turns into a line "." leaves dot-stuffed."""
    smuggled = (
        b"From: Alice <alice@example.test>\r\nTo: bob@remote.test\r\nSubject: hi\r\n\r\n"
        b"hello\n.\nMAIL FROM:<ceo@example.test>\nRCPT TO:<victim@remote.test>\nDATA\n"
        b"From: ceo@example.test\n\nwire the money\n.\r\n"
    )

    def run() -> Any:
        with smtplib.SMTP("127.0.0.1", ports[0], timeout=10) as client:
            client.starttls(context=client_tls())
            client.login(alice.email, alice.password)
            return client.sendmail(alice.email, ["bob@remote.test"], smuggled)

    assert await asyncio.to_thread(run) == {}
    handler, port = remote
    await relay(submission_ctx, port)
    [got] = handler.messages
    assert got.rcpts == ["bob@remote.test"]
    assert b"\r\n.\r\nMAIL FROM:<ceo@example.test>\r\n" in got.data  # content, not commands
