"""The plan's limits on the SMTP paths, through mail/directory/: storage at RCPT, sends at submission."""

from __future__ import annotations

import asyncio
import smtplib
import tomllib
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from common.db import Database
from common.runtime import Runtime
from mail.billing import plans
from mta.context import MtaContext
from mta.settings import MtaSettings
from mta.smtp.server import bound_port
from mta.submission import server as submission
from tests.mail.billing_helpers import PLANS_TOML
from tests.mta import factories, sending
from tests.mta.conftest import send
from tests.mta.test_submission import client_tls, message


async def use_plans(db: Database, clock) -> None:
    async with db.transaction() as conn:
        await plans.sync(conn, plans.parse(tomllib.loads(PLANS_TOML)), clock.now())


def inbound(subject: str, body: str) -> bytes:
    return (
        f"From: Bob <bob@sender.test>\r\nTo: alice@example.test\r\nSubject: {subject}\r\n"
        f"Message-ID: <{subject}@sender.test>\r\nDate: Thu, 01 Jan 2026 10:00:00 +0000\r\n\r\n"
        f"{body}\r\n"
    ).encode()


async def test_the_plan_storage_over_all_addresses_answers_552_at_rcpt(
    db: Database, clock, smtp_port: int
) -> None:
    await use_plans(db, clock)  # the default plan allows 1000 bytes per account
    owner = await factories.mailbox_owner(db, "alice@example.test")
    other = await factories.address(db, owner["domain_id"], "carol")
    first = await send(
        smtp_port, "bob@sender.test", ["alice@example.test"], inbound("one", "a" * 900)
    )
    assert first["data"][0] == 250
    # The account's other address shares the allowance: the plan counts the account.
    second = await send(smtp_port, "bob@sender.test", ["carol@example.test"], inbound("two", "b"))
    code, text = second["refused"]["carol@example.test"]
    assert code == 552 and text.startswith("5.2.2"), text
    assert "storage" in text
    assert other
    # Without limits (the built-in plan, or a plan without storage_bytes) the mail goes in.
    await db.execute("UPDATE mail.plans SET limits = limits - 'storage_bytes'")
    third = await send(smtp_port, "bob@sender.test", ["carol@example.test"], inbound("three", "c"))
    assert third["data"][0] == 250


@pytest.fixture
def submission_ctx(runtime: Runtime, mta_config: MtaSettings) -> MtaContext:
    config = replace(
        mta_config, submission_port=0, submissions_port=0, submission_auth_failures=3, mta_sts=False
    )
    return MtaContext.build(runtime, config)


@pytest.fixture
async def submission_port(submission_ctx: MtaContext) -> AsyncIterator[int]:
    async with submission.serve(submission_ctx) as servers:
        yield bound_port(servers[0])


async def test_submission_refuses_mail_over_the_monthly_sends(
    runtime: Runtime, clock, submission_port: int
) -> None:
    await use_plans(runtime.db, clock)  # the default plan allows 2 sends a month
    alice = await sending.hosted_sender(runtime.db)

    def run() -> list[object]:
        answers: list[object] = []
        with smtplib.SMTP("127.0.0.1", submission_port, timeout=10) as client:
            client.starttls(context=client_tls())
            client.login(alice.email, alice.password)
            for _ in range(3):
                try:
                    answers.append(client.send_message(message()))
                except smtplib.SMTPDataError as exc:
                    answers.append((exc.smtp_code, exc.smtp_error.decode()))
        return answers

    answers = await asyncio.to_thread(run)
    assert answers[:2] == [{}, {}]
    code, text = answers[2]
    assert code == 550 and text.startswith("5.7.1") and "sending allowance" in text
    queued = await runtime.db.fetch_val("SELECT count(*) FROM mta.outbound_messages")
    assert queued == 2
    used = await runtime.db.fetch_val("SELECT sends FROM mail.billing_usage")
    assert used == 2


async def test_sends_refused_in_a_shared_queue_commit_leave_the_others_queued(
    runtime: Runtime, clock, submission_port: int
) -> None:
    """The send is counted in the queue's own transaction, shared by messages
    arriving together: the one over the allowance is refused, the others commit."""
    await use_plans(runtime.db, clock)  # the default plan allows 2 sends a month
    alice = await sending.hosted_sender(runtime.db)

    def one() -> object:
        with smtplib.SMTP("127.0.0.1", submission_port, timeout=10) as client:
            client.starttls(context=client_tls())
            client.login(alice.email, alice.password)
            try:
                return client.send_message(message())
            except smtplib.SMTPDataError as exc:
                return exc.smtp_code

    answers = await asyncio.gather(*(asyncio.to_thread(one) for _ in range(4)))
    assert sorted(map(str, answers)) == ["550", "550", "{}", "{}"]
    queued = await runtime.db.fetch_val("SELECT count(*) FROM mta.outbound_messages")
    assert queued == 2
    assert await runtime.db.fetch_val("SELECT sends FROM mail.billing_usage") == 2
