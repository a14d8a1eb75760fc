"""Sieve redirect (RFC 5228 4.2) sent for real: inbound SMTP -> filter -> the outbound queue ->
a loopback receiver found by MX, with an SRS envelope sender whose bounces come back to us
and go on to the original sender; loops and the plan's sends refused, the message kept."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest

from common.runtime import Runtime
from mta import redirect
from mta.context import MtaContext
from mta.outbound.worker import OutboundWorker
from mta.settings import MtaSettings
from mta.smtp import replies
from tests.mta import sending
from tests.mta.conftest import send
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.sending import ReceiverHandler
from tests.mta.test_billing_smtp import use_plans
from tests.mta.test_filters import activity, create, delivered, message, owner  # noqa: F401


@pytest.fixture
async def remote(dns_server: LoopbackDNS) -> AsyncIterator[tuple[ReceiverHandler, int]]:
    async with sending.receiver() as (handler, port):
        sending.mx(dns_server, "elsewhere.test")
        sending.mx(dns_server, "sender.test")  # where a returned bounce goes
        yield handler, port


@pytest.fixture
async def worker(
    runtime: Runtime, mta_config: MtaSettings, remote: tuple[ReceiverHandler, int]
) -> AsyncIterator[OutboundWorker]:
    config = replace(mta_config, outbound_smtp_port=remote[1], mta_sts=False)
    w = OutboundWorker(MtaContext.build(runtime, config))
    yield w
    await w.close()


async def fwd(smtp_port: int, subject: str, extra: bytes = b"") -> None:
    result = await send(
        smtp_port, "bob@sender.test", ["alice@example.test"], extra + message(subject)
    )
    assert result["data"][0] == 250, result


async def test_a_redirect_reaches_the_target_with_an_srs_envelope_sender(
    gateway_client: Any,
    runtime: Runtime,
    owner: dict[str, Any],  # noqa: F811
    smtp_port: int,
    mta_ctx: MtaContext,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
) -> None:
    await create(gateway_client, owner, 'redirect "carol@elsewhere.test";')
    await create(gateway_client, owner, 'redirect :copy "dave@elsewhere.test";', position=5)
    await fwd(smtp_port, "fwd")

    assert await worker.drain() == 2
    handler, _ = remote
    assert sorted(r for m in handler.messages for r in m.rcpts) == [
        "carol@elsewhere.test",
        "dave@elsewhere.test",
    ]
    got = handler.messages[0]
    # SRS0 under the mailbox's domain (whose SPF names us), signed by our key.
    local, _, domain = got.mail_from.rpartition("@")
    assert local.startswith("SRS0=") and local.endswith("=sender.test=bob")
    assert domain == "example.test"
    assert redirect.srs(mta_ctx).reverse(local) == "bob@sender.test"
    # The loop check's field, and the message as we stored it (our trace on top).
    assert got.message["Delivered-To"] == "alice@example.test"
    assert got.message["Subject"] == "fwd" and got.message["Received"] is not None
    # A plain redirect cancels the implicit keep, :copy does not keep either.
    assert "fwd" not in await delivered(runtime, owner)
    # The activity and the events of any other send.
    kinds = [(a["kind"], a["outcome"]) for a in await activity(runtime, owner)]
    assert kinds[0] == (
        "filtered",
        "redirect to carol@elsewhere.test, redirect to dave@elsewhere.test",
    )
    assert sorted(kinds[1:]) == [
        ("sent", "delivered to carol@elsewhere.test"),
        ("sent", "delivered to dave@elsewhere.test"),
    ]
    types = await runtime.db.fetch_all(
        "SELECT type FROM mta.events WHERE account_id = %s AND type LIKE 'email.%%' ORDER BY type",
        (owner["account"].id,),
    )
    assert [t["type"] for t in types] == ["email.delivered", "email.sent"]


async def test_a_bounce_to_the_srs_address_goes_back_to_the_original_sender(
    gateway_client: Any,
    runtime: Runtime,
    owner: dict[str, Any],  # noqa: F811
    smtp_port: int,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
) -> None:
    await create(gateway_client, owner, 'redirect "carol@elsewhere.test";')
    await fwd(smtp_port, "fwd")
    await worker.drain()
    handler, _ = remote
    srs_address = handler.messages[0].mail_from

    report = b"From: MAILER-DAEMON@mx.elsewhere.test\r\nSubject: Undelivered\r\n\r\nNo carol.\r\n"
    # Only a bounce (null sender) may use it; a forged or stale one is no one here.
    assert (await send(smtp_port, "x@spam.test", [srs_address], report))["refused"][srs_address][
        1
    ] == replies.SRS_NOT_A_BOUNCE[4:]
    forged = "SRS0=AAAA" + srs_address[9:]
    assert (await send(smtp_port, "", [forged], report))["refused"][forged][0] == 550
    assert (await send(smtp_port, "", [srs_address], report))["data"][0] == 250

    assert await worker.drain() == 1
    back = handler.messages[-1]
    assert back.rcpts == ["bob@sender.test"] and back.mail_from == ""
    assert back.message["Subject"] == "Undelivered"


async def test_a_message_that_already_went_through_the_mailbox_is_not_redirected_again(
    gateway_client: Any,
    runtime: Runtime,
    owner: dict[str, Any],  # noqa: F811
    smtp_port: int,
    worker: OutboundWorker,
) -> None:
    await create(gateway_client, owner, 'redirect "carol@elsewhere.test";')
    await fwd(smtp_port, "looped", b"Delivered-To: Alice@Example.test\r\n")
    assert await worker.drain() == 0
    # RFC 5228 4.2: the loop is an error; the message is kept in the Inbox.
    assert (await delivered(runtime, owner))["looped"]["folders"] == ["Inbox"]
    [entry] = await activity(runtime, owner)
    assert entry["kind"] == "failed"
    assert "already went through alice@example.test" in entry["detail"]


async def test_redirects_count_against_the_plans_sends(
    gateway_client: Any,
    runtime: Runtime,
    clock: Any,
    owner: dict[str, Any],  # noqa: F811
    smtp_port: int,
    worker: OutboundWorker,
) -> None:
    await create(gateway_client, owner, 'redirect "carol@elsewhere.test";')
    await use_plans(runtime.db, clock)  # the default plan allows 2 sends a month
    for subject in ("one", "two", "three"):
        await fwd(smtp_port, subject)
    assert await worker.drain() == 2
    # The third is kept in the Inbox, and the activity says why.
    assert list(await delivered(runtime, owner)) == ["three"]
    failed = [a for a in await activity(runtime, owner) if a["kind"] == "failed"]
    assert len(failed) == 1 and "redirect not sent" in failed[0]["detail"]
