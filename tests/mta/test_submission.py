"""The submission daemon with real clients: smtplib and aiosmtplib, STARTTLS and implicit TLS."""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from collections.abc import AsyncIterator
from dataclasses import replace
from email.message import EmailMessage
from typing import Any

import aiosmtplib
import pytest

from common.passwords import hash_password
from common.runtime import Runtime
from mta import mailstore
from mta.context import MtaContext
from mta.outbound.worker import OutboundWorker
from mta.settings import MtaSettings
from mta.smtp.server import bound_port
from mta.submission import server as submission
from tests.mta import sending
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.sending import Sender


def client_tls() -> ssl.SSLContext:
    # The development certificate is self-signed: a client that pinned nothing skips the check.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


@pytest.fixture
def submission_config(mta_config: MtaSettings) -> MtaSettings:
    return replace(
        mta_config,
        submission_port=0,
        submissions_port=0,
        submission_auth_failures=3,
        mta_sts=False,
    )


@pytest.fixture
def submission_ctx(runtime: Runtime, submission_config: MtaSettings) -> MtaContext:
    return MtaContext.build(runtime, submission_config)


@pytest.fixture
async def ports(submission_ctx: MtaContext) -> AsyncIterator[tuple[int, int]]:
    async with submission.serve(submission_ctx) as servers:
        yield bound_port(servers[0]), bound_port(servers[1])


@pytest.fixture
async def alice(runtime: Runtime) -> Sender:
    return await sending.hosted_sender(runtime.db)


def message(sender: str = "alice@example.test", to: str = "bob@remote.test") -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = f"Alice <{sender}>"
    msg["To"] = to
    msg["Subject"] = "Sent from my client"
    msg.set_content("Hello Bob.\n")
    return msg


def smtplib_session(port: int, fn: Any) -> Any:
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
        return fn(client)


async def queued_rows(runtime: Runtime) -> list[dict[str, Any]]:
    return await runtime.db.fetch_all(
        "SELECT m.id::text, m.source, m.mail_from, m.status, m.raw, r.rcpt"
        " FROM mta.outbound_messages m JOIN mta.outbound_recipients r ON r.message_id = m.id"
        " ORDER BY m.created_at, r.position"
    )


async def test_smtplib_starttls_auth_plain_queues_the_message_before_250(
    runtime: Runtime, ports: tuple[int, int], alice: Sender
) -> None:
    def run(client: smtplib.SMTP) -> Any:
        client.ehlo("laptop.test")
        before_tls = client.has_extn("auth")
        code, text = client.docmd("AUTH", "PLAIN AGFsaWNlQGV4YW1wbGUudGVzdABjb3JyZWN0")
        client.starttls(context=client_tls())
        client.ehlo("laptop.test")
        mechanisms = client.esmtp_features.get("auth", "")
        client.login(alice.email, alice.password)
        refused = client.send_message(message())
        return before_tls, (code, text), mechanisms, refused

    before_tls, early, mechanisms, refused = await asyncio.to_thread(smtplib_session, ports[0], run)
    assert before_tls is False
    assert early[0] == 538  # AUTH before TLS: encryption required
    assert set(mechanisms.split()) == {"PLAIN", "LOGIN"}
    assert refused == {}

    [row] = await queued_rows(runtime)
    assert (row["source"], row["mail_from"], row["status"], row["rcpt"]) == (
        "submission",
        "alice@example.test",
        "queued",
        "bob@remote.test",
    )
    raw = bytes(row["raw"])
    assert raw.startswith(b"Received: from laptop.test ([127.0.0.1])")
    assert b"with ESMTPSA id " + row["id"].encode() in raw
    # The client sent no Message-ID or Date: submission adds them (RFC 6409 8).
    assert b"\r\nMessage-ID: <" in raw and b"\r\nDate: " in raw
    async with runtime.db.connection() as conn:
        found = await mailstore.outbound_status(conn, alice.account_id, row["id"])
    assert found is not None and found.source == "submission"


async def test_aiosmtplib_sends_and_the_worker_delivers_it(
    runtime: Runtime,
    dns_server: LoopbackDNS,
    submission_ctx: MtaContext,
    ports: tuple[int, int],
    alice: Sender,
) -> None:
    async with sending.receiver() as (handler, port):
        sending.mx(dns_server, "remote.test")
        errors, reply = await aiosmtplib.send(
            message(to="Bob <bob@remote.test>"),
            hostname="127.0.0.1",
            port=ports[0],
            start_tls=True,
            tls_context=client_tls(),
            username=alice.email,
            password=alice.password,
        )
        assert errors == {} and reply.startswith("2.0.0 OK: queued as ")
        worker = OutboundWorker(
            replace(submission_ctx, config=replace(submission_ctx.config, outbound_smtp_port=port))
        )
        try:
            assert await worker.drain() == 1
        finally:
            await worker.close()
        [got] = handler.messages
        assert got.rcpts == ["bob@remote.test"]
        assert got.message["Subject"] == "Sent from my client"
        assert got.message["Received"].startswith("from ")


async def test_auth_login_and_implicit_tls_on_the_submissions_port(
    runtime: Runtime, ports: tuple[int, int], alice: Sender
) -> None:
    def run() -> Any:
        with smtplib.SMTP_SSL("127.0.0.1", ports[1], context=client_tls(), timeout=10) as client:
            client.ehlo("laptop.test")
            offered = client.esmtp_features.get("auth", "")
            starttls = client.has_extn("starttls")
            client.user, client.password = alice.email, alice.password
            code, _ = client.auth("LOGIN", client.auth_login)
            return offered, starttls, code, client.send_message(message())

    offered, starttls, code, refused = await asyncio.to_thread(run)
    assert "LOGIN" in offered and not starttls
    assert code == 235 and refused == {}
    assert len(await queued_rows(runtime)) == 1


async def test_a_wrong_password_is_refused_and_failures_are_rate_limited(
    runtime: Runtime, ports: tuple[int, int], alice: Sender
) -> None:
    def attempt(password: str) -> tuple[int, str]:
        with smtplib.SMTP("127.0.0.1", ports[0], timeout=10) as client:
            client.starttls(context=client_tls())
            try:
                client.login(alice.email, password)
            except smtplib.SMTPAuthenticationError as exc:
                return exc.smtp_code, exc.smtp_error.decode()
            except smtplib.SMTPServerDisconnected:
                return 0, "disconnected"
            return 235, "ok"

    first = await asyncio.to_thread(attempt, "wrong")
    assert first[0] == 535 and "5.7.8" in first[1]
    for _ in range(2):
        await asyncio.to_thread(attempt, "wrong again")
    # Over the budget (3 per window): even the right password is not checked now.
    code, text = await asyncio.to_thread(attempt, alice.password)
    assert code in (421, 0), text
    assert await queued_rows(runtime) == []


async def test_sending_as_someone_else_is_refused_with_550(
    runtime: Runtime, ports: tuple[int, int], alice: Sender
) -> None:
    await sending.hosted_sender(runtime.db, "mallory@other.test")

    def run(client: smtplib.SMTP) -> Any:
        client.starttls(context=client_tls())
        client.login(alice.email, alice.password)
        envelope = client.mail("ceo@example.test")
        client.rset()
        # The envelope is hers, the From header is not.
        client.mail("alice@example.test")
        client.rcpt("bob@remote.test")
        header = client.data(message(sender="ceo@example.test").as_bytes())
        # A +tag of her own address is hers.
        client.rset()
        tagged = client.mail("alice+news@example.test")
        return envelope, header, tagged

    envelope, header, tagged = await asyncio.to_thread(smtplib_session, ports[0], run)
    assert envelope[0] == 550
    assert b"5.7.1" in envelope[1] and b"may not send as <ceo@example.test>" in envelope[1]
    assert header[0] == 550 and b"From header rejected" in header[1]
    assert tagged[0] == 250
    assert await queued_rows(runtime) == []


async def test_recipients_are_checked_as_on_every_sending_path(
    runtime: Runtime, ports: tuple[int, int], alice: Sender
) -> None:
    """.test names pass (RFC 6761 6.2); a special-use destination is refused with
    550 5.1.2 and its reason, a malformed address with 553 5.1.3 (common/recipients.py)."""

    def run(client: smtplib.SMTP) -> Any:
        client.starttls(context=client_tls())
        client.login(alice.email, alice.password)
        client.mail(alice.email)
        answers = {
            to: client.rcpt(to)
            for to in ("x@receiver.test", "x@host.invalid", "x@[127.0.0.1]", "a..b@remote.test")
        }
        client.data(message(to="x@receiver.test").as_bytes())
        return answers

    answers = await asyncio.to_thread(smtplib_session, ports[0], run)
    assert answers["x@receiver.test"][0] == 250
    code, text = answers["x@host.invalid"]
    assert code == 550 and text.startswith(b"5.1.2") and b"RFC 6761 6.4" in text
    code, text = answers["x@[127.0.0.1]"]
    assert code == 550 and b"address literals" in text
    code, text = answers["a..b@remote.test"]
    assert code == 553 and text.startswith(b"5.1.3") and b"two periods" in text
    assert [r["rcpt"] for r in await queued_rows(runtime)] == ["x@receiver.test"]


async def test_mail_without_auth_is_refused(ports: tuple[int, int], alice: Sender) -> None:
    def run(client: smtplib.SMTP) -> Any:
        client.starttls(context=client_tls())
        client.ehlo("laptop.test")
        return client.mail(alice.email)

    code, text = await asyncio.to_thread(smtplib_session, ports[0], run)
    assert code == 530, text


async def test_loopback_may_log_in_without_tls_when_development_allows_it(
    runtime: Runtime, submission_config: MtaSettings, alice: Sender
) -> None:
    ctx = MtaContext.build(runtime, replace(submission_config, submission_plaintext_loopback=True))
    async with submission.serve(ctx) as servers:

        def run(client: smtplib.SMTP) -> Any:
            client.ehlo("laptop.test")
            client.login(alice.email, alice.password)
            return client.send_message(message())

        assert await asyncio.to_thread(smtplib_session, bound_port(servers[0]), run) == {}
    assert len(await queued_rows(runtime)) == 1


async def test_a_changed_password_or_a_removed_address_is_refused_on_the_next_session(
    runtime: Runtime, ports: tuple[int, int], alice: Sender
) -> None:
    """AUTH holds for its session only: nothing verified is kept for the next one."""

    async def session(password: str) -> tuple[int, str]:
        client = aiosmtplib.SMTP(hostname="127.0.0.1", port=ports[0], start_tls=False, timeout=10)
        await client.connect()
        try:
            await client.starttls(tls_context=client_tls())
            await client.ehlo()
            await client.auth_plain(alice.email, password)  # one attempt, one failure
            errors, reply = await client.sendmail(
                alice.email, ["bob@remote.test"], message().as_bytes()
            )
            assert not errors
            return 250, reply
        except aiosmtplib.SMTPAuthenticationError as exc:
            return exc.code, exc.message
        finally:
            client.close()

    assert (await session(alice.password))[0] == 250
    await runtime.db.execute(
        "UPDATE mail.addresses SET password_hash = %s WHERE id = %s",
        (await hash_password("a new password"), alice.address_id),
    )
    code, text = await session(alice.password)
    assert code == 535 and "5.7.8" in text
    assert (await session("a new password"))[0] == 250

    await runtime.db.execute("DELETE FROM mail.addresses WHERE id = %s", (alice.address_id,))
    assert (await session("a new password"))[0] == 535
    assert len(await queued_rows(runtime)) == 2
