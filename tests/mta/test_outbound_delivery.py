"""The outbound worker against a real receiving SMTP server found through loopback MX records."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import authheaders
import dns.resolver
import pytest

from common.clock import ManualClock
from common.runtime import Runtime
from mta import mailstore
from mta.context import MtaContext
from mta.outbound.worker import OutboundWorker
from mta.settings import MtaSettings
from tests.mta import sending
from tests.mta.conftest import send
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.sending import ReceiverHandler, Sender

RAW = (
    b"From: Alice <alice@example.test>\r\nTo: bob@remote.test\r\nSubject: Quarterly figures\r\n"
    b"Date: Mon, 01 Jan 2030 12:00:00 +0000\r\nMessage-ID: <q1@example.test>\r\n"
    b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nSee attached.\r\n"
)


@pytest.fixture
async def remote(dns_server: LoopbackDNS) -> AsyncIterator[tuple[ReceiverHandler, int]]:
    async with sending.receiver() as (handler, port):
        sending.mx(dns_server, "remote.test")
        # Bounces and DSNs for the sender come back to "its" MX: the same receiver.
        sending.mx(dns_server, "example.test")
        yield handler, port


@pytest.fixture
def worker_config(mta_config: MtaSettings, remote: tuple[ReceiverHandler, int]) -> MtaSettings:
    return replace(
        mta_config,
        outbound_smtp_port=remote[1],
        outbound_retry_schedule=(60, 300),
        mta_sts=False,
    )


@pytest.fixture
async def worker(runtime: Runtime, worker_config: MtaSettings) -> AsyncIterator[OutboundWorker]:
    w = OutboundWorker(MtaContext.build(runtime, worker_config))
    yield w
    await w.close()


@pytest.fixture
async def alice(runtime: Runtime) -> Sender:
    return await sending.hosted_sender(runtime.db)


async def enqueue(
    runtime: Runtime,
    sender: Sender,
    *,
    source: str = "api",
    rcpts: list[str] | None = None,
    raw: bytes = RAW,
    **kw: Any,
) -> str:
    message_id = str(uuid.uuid4())
    async with runtime.db.transaction() as conn:
        await mailstore.enqueue(
            conn,
            message_id=message_id,
            account_id=sender.account_id,
            source=source,
            mail_from=sender.email,
            recipients=rcpts or ["bob@remote.test"],
            raw=raw,
            now=runtime.clock.now(),
            **kw,
        )
    return message_id


async def status(runtime: Runtime, sender: Sender, message_id: str) -> mailstore.OutboundStatus:
    async with runtime.db.connection() as conn:
        found = await mailstore.outbound_status(conn, sender.account_id, message_id)
    assert found is not None
    return found


async def event_types(runtime: Runtime, sender: Sender, message_id: str) -> list[str]:
    async with runtime.db.connection() as conn:
        return [e.type for e in await mailstore.email_events(conn, sender.account_id, message_id)]


def dkim_verify(dns_server: LoopbackDNS, data: bytes) -> str:
    """authheaders' DKIM verdict, its keys read from the loopback DNS."""
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


@pytest.mark.parametrize(
    ("algorithm", "selector"), [("rsa-sha256", "rsa2030"), ("ed25519-sha256", "ed2030")]
)
async def test_mail_is_delivered_through_mx_signed_with_the_domains_key(
    runtime: Runtime,
    dns_server: LoopbackDNS,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
    algorithm: str,
    selector: str,
) -> None:
    handler, _ = remote
    await sending.dkim_key(runtime, dns_server, alice, algorithm, selector)
    message_id = await enqueue(runtime, alice)

    assert await worker.drain() == 1
    [got] = handler.messages
    assert got.rcpts == ["bob@remote.test"]
    # The Return-Path is a VERP address of the sending domain.
    assert got.mail_from.startswith("bounces+") and got.mail_from.endswith("@example.test")
    signature = got.message["DKIM-Signature"]
    assert "d=example.test" in signature and f"s={selector}" in signature
    assert f"a={algorithm}" in signature and "c=relaxed/relaxed" in signature
    # From is oversigned: listed once more than it appears.
    signed = signature.split("h=")[1].split(";")[0].replace(" ", "").replace("\r\n", "")
    assert signed.split(":").count("from") == 2
    verdict = dkim_verify(dns_server, got.data)
    assert "dkim=pass" in verdict and "header.d=example.test" in verdict
    # Tampering breaks it (the verifier is not just saying pass).
    assert "dkim=fail" in dkim_verify(dns_server, got.data.replace(b"See attached", b"See nothing"))

    found = await status(runtime, alice, message_id)
    assert found.status == "delivered"
    [rcpt] = found.recipients
    assert (rcpt.status, rcpt.attempts) == ("delivered", 1)
    assert rcpt.last_reply.startswith("250") and rcpt.destination == "mx.remote.test"
    assert await event_types(runtime, alice, message_id) == ["email.sent", "email.delivered"]
    async with runtime.db.connection() as conn:
        entries, _ = await mailstore.activity_page(conn, alice.address_id, limit=10, offset=0)
    assert [(a.kind, a.subject, a.peer) for a in entries] == [
        ("sent", "Quarterly figures", "mx.remote.test")
    ]


async def test_a_451_is_retried_when_the_schedule_says_and_then_delivered(
    runtime: Runtime,
    clock: ManualClock,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    handler, _ = remote
    handler.rcpt_replies["bob@remote.test"] = ["451 4.7.1 greylisted, try again later"]
    message_id = await enqueue(runtime, alice)

    await worker.drain()
    found = await status(runtime, alice, message_id)
    assert found.status == "delivery_delayed"
    [rcpt] = found.recipients
    assert rcpt.status == "deferred" and rcpt.last_reply.startswith("451 4.7.1 greylisted")
    assert (rcpt.next_attempt_at - clock.now()).total_seconds() == 60
    assert handler.messages == []

    clock.advance(seconds=59)
    assert await worker.drain() == 0  # not yet
    clock.advance(seconds=1)
    assert await worker.drain() == 1
    assert len(handler.messages) == 1
    found = await status(runtime, alice, message_id)
    assert found.status == "delivered" and found.recipients[0].attempts == 2
    assert await event_types(runtime, alice, message_id) == [
        "email.sent",
        "email.delivery_delayed",
        "email.delivered",
    ]


async def test_a_550_to_submitted_mail_bounces_to_the_sender_and_suppresses(
    runtime: Runtime,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    handler, _ = remote
    handler.rcpt_replies["bob@remote.test"] = ["550 5.1.1 <bob@remote.test>: no such user"]
    message_id = await enqueue(
        runtime, alice, source="submission", rcpts=["bob@remote.test", "carol@remote.test"]
    )

    await worker.drain()  # the message, then the DSN it queued
    found = await status(runtime, alice, message_id)
    assert found.status == "bounced"
    assert [(r.email, r.status) for r in found.recipients] == [
        ("bob@remote.test", "bounced"),
        ("carol@remote.test", "delivered"),
    ]
    # The DSN: to the sender, with an empty envelope sender, RFC 3464.
    dsn = [m for m in handler.messages if m.mail_from == ""]
    assert len(dsn) == 1 and dsn[0].rcpts == ["alice@example.test"]
    report = dsn[0].message
    assert report.get_content_type() == "multipart/report"
    assert report.get_param("report-type") == "delivery-status"
    status_part = report.get_payload()[1]
    assert status_part.get_content_type() == "message/delivery-status"
    fields = status_part.get_payload()[1]
    assert fields["Final-Recipient"] == "rfc822; bob@remote.test"
    assert fields["Status"] == "5.1.1" and fields["Action"] == "failed"
    assert "no such user" in fields["Diagnostic-Code"]
    assert "Quarterly figures" in report["Subject"]

    async with runtime.db.connection() as conn:
        assert await mailstore.suppressed(conn, alice.account_id, ["bob@remote.test"]) == {
            "bob@remote.test"
        }
        page, _ = await mailstore.suppression_page(
            conn, alice.account_id, limit=10, offset=0, order_by="created_at", search=None
        )
        assert [(s.email, s.reason, s.email_id) for s in page] == [
            ("bob@remote.test", "bounce", message_id)
        ]
    assert "email.bounced" in await event_types(runtime, alice, message_id)

    # The next message to bob is not attempted.
    again = await enqueue(runtime, alice, rcpts=["bob@remote.test"])
    await worker.drain()
    found = await status(runtime, alice, again)
    assert found.status == "suppressed" and found.recipients[0].status == "suppressed"
    assert len([m for m in handler.messages if "bob@remote.test" in m.rcpts]) == 0


async def test_api_mail_that_bounces_gets_an_event_not_a_dsn(
    runtime: Runtime,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    handler, _ = remote
    handler.rcpt_replies["bob@remote.test"] = ["550 5.1.1 no such user"]
    data = {"email_id": "x", "from": "alice@example.test", "to": ["bob@remote.test"]}
    message_id = await enqueue(runtime, alice, event_data=data)
    await worker.drain()
    assert handler.messages == []
    async with runtime.db.connection() as conn:
        events = await mailstore.email_events(conn, alice.account_id, message_id)
    bounced = [e for e in events if e.type == "email.bounced"]
    assert len(bounced) == 1
    assert bounced[0].payload["data"]["to"] == ["bob@remote.test"]
    assert bounced[0].payload["data"]["bounce"]["type"] == "Permanent"
    assert "no such user" in bounced[0].payload["data"]["bounce"]["message"]


async def test_a_null_mx_fails_at_once_without_a_connection(
    runtime: Runtime,
    dns_server: LoopbackDNS,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    handler, _ = remote
    dns_server.add("nomail.test", "MX", "0 .")
    dns_server.add("nomail.test", "A", "127.0.0.1")  # no fallback to it
    message_id = await enqueue(runtime, alice, rcpts=["someone@nomail.test"])
    await worker.drain()
    found = await status(runtime, alice, message_id)
    assert found.status == "bounced"
    assert found.recipients[0].last_reply.startswith("556 5.1.10")
    assert handler.connections == 0


async def test_no_mx_falls_back_to_the_domains_address(
    runtime: Runtime,
    dns_server: LoopbackDNS,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    handler, _ = remote
    dns_server.add("plain.test", "A", "127.0.0.1")
    message_id = await enqueue(runtime, alice, rcpts=["someone@plain.test"])
    await worker.drain()
    assert (await status(runtime, alice, message_id)).status == "delivered"
    assert handler.messages[0].rcpts == ["someone@plain.test"]


async def test_a_server_that_never_answers_250_fails_after_the_lifetime(
    runtime: Runtime,
    clock: ManualClock,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    handler, _ = remote
    handler.rcpt_replies["bob@remote.test"] = ["421 4.3.2 busy"] * 10
    worker.ctx = replace(worker.ctx, config=replace(worker.ctx.config, outbound_max_lifetime=600))
    message_id = await enqueue(runtime, alice, event_data={"email_id": "x"})
    for _ in range(5):
        await worker.drain()
        clock.advance(seconds=301)
    found = await status(runtime, alice, message_id)
    assert found.status == "failed"
    assert "message expired" in found.recipients[0].last_reply
    assert found.recipients[0].attempts == 2  # at 0 and 301 s; 601 s would be past 600
    types = await event_types(runtime, alice, message_id)
    assert types == ["email.sent", "email.delivery_delayed", "email.failed"]


async def test_sessions_to_a_destination_are_reused(
    runtime: Runtime,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    handler, _ = remote
    worker.connections.per_destination = 1
    for _ in range(4):
        await enqueue(runtime, alice)
    assert await worker.drain() == 4
    assert len(handler.messages) == 4
    assert handler.connections == 1


async def test_a_recipient_suppressed_after_queueing_is_not_attempted(
    runtime: Runtime,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    handler, _ = remote
    message_id = await enqueue(runtime, alice)
    async with runtime.db.transaction() as conn:
        await mailstore.add_suppression(
            conn, alice.account_id, "bob@remote.test", "manual", runtime.clock.now()
        )
    await worker.drain()
    found = await status(runtime, alice, message_id)
    assert found.recipients[0].status == "suppressed" and found.recipients[0].attempts == 0
    assert handler.connections == 0


async def test_suppressions_checked_with_the_claim_match_any_case_and_non_ascii_addresses(
    runtime: Runtime,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    handler, _ = remote
    rcpts = ["Bob@Remote.test", "ZOË@remote.test", "carol@remote.test"]
    message_id = await enqueue(runtime, alice, rcpts=rcpts)
    async with runtime.db.transaction() as conn:
        for address in ("bob@remote.test", "zoë@remote.test"):
            await mailstore.add_suppression(
                conn, alice.account_id, address, "manual", runtime.clock.now()
            )
    await worker.drain()
    found = await status(runtime, alice, message_id)
    assert [(r.email, r.status, r.attempts) for r in found.recipients] == [
        ("Bob@Remote.test", "suppressed", 0),
        ("ZOË@remote.test", "suppressed", 0),
        ("carol@remote.test", "delivered", 1),
    ]
    assert [m.rcpts for m in handler.messages] == [["carol@remote.test"]]


def report(to: str, report_type: str, body: str) -> bytes:
    return (
        f"From: MAILER-DAEMON@mx.remote.test\r\nTo: {to}\r\nSubject: report\r\n"
        "MIME-Version: 1.0\r\n"
        f'Content-Type: multipart/report; report-type={report_type}; boundary="b"\r\n\r\n'
        "--b\r\nContent-Type: text/plain\r\n\r\nSorry.\r\n"
        f"--b\r\n{body}\r\n--b--\r\n"
    ).encode()


async def test_a_later_bounce_to_the_verp_address_is_matched_to_its_email(
    runtime: Runtime,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
    smtp_port: int,
) -> None:
    handler, _ = remote
    message_id = await enqueue(runtime, alice, event_data={"email_id": "x"})
    await worker.drain()
    assert (await status(runtime, alice, message_id)).status == "delivered"
    return_path = handler.messages[0].mail_from

    # Accepted at first, bounced an hour later by the remote's own queue.
    dsn = report(
        return_path,
        "delivery-status",
        "Content-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.remote.test\r\n\r\n"
        "Final-Recipient: rfc822; bob@remote.test\r\nAction: failed\r\nStatus: 5.1.1\r\n"
        "Diagnostic-Code: smtp; 550 5.1.1 mailbox disabled\r\n",
    )
    result = await send(smtp_port, "", [return_path], dsn)
    assert result["data"][0] == 250
    found = await status(runtime, alice, message_id)
    assert found.status == "bounced"
    assert found.recipients[0].last_reply == "5.1.1 550 5.1.1 mailbox disabled"
    types = await event_types(runtime, alice, message_id)
    assert types[-1] == "email.bounced"
    async with runtime.db.connection() as conn:
        assert await mailstore.suppressed(conn, alice.account_id, ["bob@remote.test"])

    # A token that is not ours is an unknown user like any other.
    unknown = await send(smtp_port, "", ["bounces+0000@example.test"], dsn)
    assert unknown["refused"]["bounces+0000@example.test"][0] == 550


async def test_a_complaint_report_suppresses_and_records_email_complained(
    runtime: Runtime,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
    smtp_port: int,
) -> None:
    handler, _ = remote
    message_id = await enqueue(runtime, alice, event_data={"email_id": "x"})
    await worker.drain()
    arf = report(
        handler.messages[0].mail_from,
        "feedback-report",
        "Content-Type: message/feedback-report\r\n\r\nFeedback-Type: abuse\r\n"
        "User-Agent: remote-fbl/1.0\r\nVersion: 1\r\n",
    )
    result = await send(smtp_port, "fbl@remote.test", [handler.messages[0].mail_from], arf)
    assert result["data"][0] == 250
    assert (await status(runtime, alice, message_id)).status == "complained"
    assert (await event_types(runtime, alice, message_id))[-1] == "email.complained"
    async with runtime.db.connection() as conn:
        page, _ = await mailstore.suppression_page(
            conn, alice.account_id, limit=5, offset=0, order_by="created_at", search=None
        )
    assert [(s.email, s.reason) for s in page] == [("bob@remote.test", "complaint")]


def test_the_signer_is_dkimpys_with_openssl_doing_the_rsa() -> None:
    """signer._Signer copies dkimpy 1.1.8's gen_header: same bytes as dkimpy's own signature."""
    from importlib.metadata import version

    import dkim

    from mail.directory import SigningKey
    from mail.dkim import keys
    from mta.outbound.signer import _sign, header_list

    assert version("dkimpy") == "1.1.8"  # re-read gen_header before upgrading
    pair = keys.generate_sync(keys.RSA)
    key = SigningKey("example.test", "sel", keys.RSA, pair.private_key)
    ours = _sign(RAW, key)
    theirs = dkim.sign(
        RAW,
        b"sel",
        b"example.test",
        pair.private_key,
        canonicalize=(b"relaxed", b"relaxed"),
        include_headers=header_list(RAW),
    )
    # t= is the signing second: equal unless the two calls straddle a second.
    assert ours.split(b"bh=")[1] == theirs.split(b"bh=")[1]


async def test_scheduled_mail_leaves_at_its_time(
    runtime: Runtime,
    clock: ManualClock,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    handler, _ = remote
    at = clock.now() + timedelta(hours=1)
    message_id = await enqueue(runtime, alice, scheduled_at=at, event_data={"email_id": "x"})
    assert await worker.drain() == 0
    clock.advance(seconds=3599)
    assert await worker.drain() == 0 and handler.messages == []
    clock.advance(seconds=1)
    assert await worker.drain() == 1 and len(handler.messages) == 1
    assert await event_types(runtime, alice, message_id) == [
        "email.scheduled",
        "email.sent",
        "email.delivered",
    ]


async def test_the_panels_own_mail_is_delivered_then_its_sealed_raw_erased(
    runtime: Runtime,
    dns_server: LoopbackDNS,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    handler, _ = remote
    link = b"https://panel.test/reset-password?token=one-time-secret"
    raw = b"From: no-reply@example.test\r\nTo: bob@remote.test\r\nSubject: Reset\r\n\r\n" + link
    message_id = await enqueue(
        runtime,
        alice,
        source="system",
        raw=raw,
        sealer=mailstore.outbound_sealer(runtime.settings.secret),
    )
    await worker.drain()
    [got] = handler.messages
    assert link in got.data
    # System mail keeps its own envelope sender (no VERP) and writes no webhook events.
    assert got.mail_from == alice.email
    assert await event_types(runtime, alice, message_id) == []
    row = await runtime.db.fetch_one(
        "SELECT status, raw, raw_sealed FROM mta.outbound_messages WHERE id = %s", (message_id,)
    )
    assert row == {"status": "delivered", "raw": None, "raw_sealed": None}


async def test_at_most_twenty_sessions_to_a_destination_and_the_rest_reuse_them(
    runtime: Runtime,
    remote: tuple[ReceiverHandler, int],
    worker: OutboundWorker,
    alice: Sender,
) -> None:
    """Postfix's default_destination_concurrency_limit: 20 sessions to one destination
    at once; messages beyond wait for one and go over it, no new connection."""
    handler, _ = remote
    handler.hold = asyncio.Event()
    receive = handler.handle_DATA
    held, most, twenty = 0, 0, asyncio.Event()

    async def counting(server: Any, session: Any, envelope: Any) -> str:
        nonlocal held, most
        held += 1
        most = max(most, held)
        if held == 20:
            twenty.set()
        try:
            return await receive(server, session, envelope)
        finally:
            held -= 1

    handler.handle_DATA = counting  # type: ignore[method-assign]
    for _ in range(25):
        await enqueue(runtime, alice)
    run = asyncio.create_task(worker.run_once())
    await asyncio.wait_for(twenty.wait(), 30)
    handler.hold.set()
    assert await asyncio.wait_for(run, 30) == 25
    assert len(handler.messages) == 25
    assert most == 20
    assert handler.connections == 20


async def test_the_signing_pool_signs_as_this_process_and_outlives_a_dead_child() -> None:
    import dkim

    from mail.directory import SigningKey
    from mail.dkim import keys
    from mta.outbound.signer import SigningPool

    pair = keys.generate_sync(keys.RSA)
    key = SigningKey("example.test", "sel", keys.RSA, pair.private_key)
    record = b"v=DKIM1; k=rsa; p=" + pair.public_key_b64.encode()

    def verifies(signature: bytes) -> bool:
        return bool(dkim.verify(signature + RAW, dnsfunc=lambda name, timeout=5: record))

    pool = SigningPool(2)
    try:
        # Many at once from the start (the children start once), answered in
        # order: each signature is its own message's.
        bodies = [RAW.replace(b"See attached.", f"Part {n}.".encode()) for n in range(20)]
        signatures = await asyncio.gather(*(pool.sign(b, key) for b in bodies))
        assert all(
            dkim.verify(s + b, dnsfunc=lambda name, timeout=5: record)
            for s, b in zip(signatures, bodies, strict=True)
        )
        assert len(pool._children) == 2
        await pool.close()

        pool = SigningPool(1)
        assert verifies(await pool.sign(RAW, key))
        [child] = pool._children  # signed in a child process
        assert child.process.pid != os.getpid()
        child.process.kill()
        await child.process.wait()
        # The child is gone: this one is signed here (or, had it noticed, by a new
        # child), the next in a new child.
        assert verifies(await pool.sign(RAW, key))
        assert verifies(await pool.sign(RAW, key))
        [replacement] = pool._children
        assert replacement is not child and replacement.alive
    finally:
        await pool.close()
