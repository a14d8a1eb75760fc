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
from collections.abc import AsyncIterator
from dataclasses import replace
from types import MappingProxyType

import pytest

from common.runtime import Runtime
from common.settings import Settings
from mta.settings import MtaSettings
from tests.mta import sending
from tests.mta.access import Doors, imap_and_submission, imap_login, smtp_login
from tests.mta.sending import Sender

PER_SECOND = 3  # AUTH_RATE_LIMIT_PER_SECOND here


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return replace(
        settings,
        environ=MappingProxyType({**settings.environ, "AUTH_RATE_LIMIT_PER_SECOND": "3"}),
    )


@pytest.fixture
async def doors(runtime: Runtime, mta_config: MtaSettings) -> AsyncIterator[Doors]:
    # Submission's own window out of reach: only the shared budget can refuse.
    async with imap_and_submission(runtime, mta_config, submission_auth_failures=1000) as doors:
        yield doors


@pytest.fixture
async def alice(runtime: Runtime) -> Sender:
    return await sending.hosted_sender(runtime.db)


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
