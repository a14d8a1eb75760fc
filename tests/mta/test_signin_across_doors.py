"""One budget however the guesses are split between protocols (docs/mail.md,
"Failed sign-ins"): SMTP submission's AUTH spends the client address's
sign-in budget through the function IMAP spends it through, so failures over
submission refuse IMAP's sign-in and the reverse.

The budget that binds here is ``mail:auth-ip:<ip>`` (the one JMAP and
webmail spend, AUTH_RATE_LIMIT_PER_SECOND within one second of the frozen
clock); submission's own window is set out of reach so that only the shared
one can refuse.
"""

from __future__ import annotations

import asyncio
import smtplib
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from types import MappingProxyType

import pytest

from common.runtime import Runtime
from common.settings import Settings
from mta.context import MtaContext
from mta.imap import server as imap_server
from mta.settings import MtaSettings
from mta.smtp.server import bound_port
from mta.submission import server as submission
from tests.mta import sending
from tests.mta.access import client_tls, imap_login
from tests.mta.sending import Sender

PER_SECOND = 3  # AUTH_RATE_LIMIT_PER_SECOND here


@dataclass(frozen=True)
class Doors:
    imaps: int
    submissions: int


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(
        settings,
        environ=MappingProxyType({**settings.environ, "AUTH_RATE_LIMIT_PER_SECOND": "3"}),
    )


@pytest.fixture
async def doors(runtime: Runtime, mta_config: MtaSettings) -> AsyncIterator[Doors]:
    config = replace(
        mta_config,
        imap_host="127.0.0.1",
        imap_port=None,
        imaps_port=0,
        submission_port=None,
        submissions_port=0,
        submission_plaintext_loopback=False,
        submission_auth_failures=1000,
        smtp_error_sleep=0.0,
        mta_sts=False,
    )
    ctx = MtaContext.build(runtime, config)
    async with imap_server.serve(ctx) as imaps, submission.serve(ctx) as smtps:
        yield Doors(imap_server.bound_ports(imaps)[0], bound_port(smtps[0]))


@pytest.fixture
async def alice(runtime: Runtime) -> Sender:
    return await sending.hosted_sender(runtime.db)


def smtp_login(port: int, login: str, password: str) -> int:
    """The AUTH PLAIN reply's code; 0 when the server hung up instead of answering.
    (One mechanism: ``login()`` would try LOGIN after a failed PLAIN, two guesses.)"""
    with smtplib.SMTP_SSL("127.0.0.1", port, timeout=10, context=client_tls()) as client:
        client.user, client.password = login, password
        client.ehlo()
        try:
            return client.auth("PLAIN", client.auth_plain)[0]
        except smtplib.SMTPAuthenticationError as exc:
            return exc.smtp_code
        except smtplib.SMTPServerDisconnected:
            return 0


async def test_failures_over_submission_refuse_imap_sign_in(doors: Doors, alice: Sender) -> None:
    assert await asyncio.to_thread(smtp_login, doors.submissions, alice.email, "a guess") == 535
    assert await asyncio.to_thread(smtp_login, doors.submissions, "nobody@example.test", "x") == 535
    # Two failures of three: IMAP still lets the owner in from here.
    assert await asyncio.to_thread(imap_login, doors.imaps, alice.email, alice.password) == "OK"
    assert await asyncio.to_thread(smtp_login, doors.submissions, alice.email, "again") == 535

    # The third, over submission, spent the budget IMAP asks before checking.
    refused = await asyncio.to_thread(imap_login, doors.imaps, alice.email, alice.password)
    assert "[UNAVAILABLE]" in refused and "Too many failed logins" in refused
    assert await asyncio.to_thread(smtp_login, doors.submissions, alice.email, alice.password) in (
        421,
        0,
    )


async def test_failures_over_imap_refuse_submission_auth(doors: Doors, alice: Sender) -> None:
    for password in ("one", "two", "three"):
        answer = await asyncio.to_thread(imap_login, doors.imaps, alice.email, password)
        assert "[AUTHENTICATIONFAILED]" in answer

    # Right password, other protocol: 421 4.7.0 (or the hang-up that follows it).
    code = await asyncio.to_thread(smtp_login, doors.submissions, alice.email, alice.password)
    assert code in (421, 0)
