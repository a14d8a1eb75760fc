"""The sign-in budget (failed authentications) and the per-principal request budget."""

from __future__ import annotations

import base64
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest
from jmapc.methods import MailboxGet

from common.settings import Settings
from tests.mta.jmap.conftest import MAIL, Mailbox, Server, make_mailbox, run
from tests.mta.jmap.test_auth import get_session


@pytest.fixture
def settings(settings: Settings) -> Settings:
    env = dict(settings.environ)
    env.update({"AUTH_RATE_LIMIT_PER_SECOND": "3", "JMAP_REQUESTS_PER_MINUTE": "40"})
    return replace(settings, environ=MappingProxyType(env))


async def test_failed_sign_ins_spend_the_sign_in_budget_then_429(
    jmap_server: Server, alice: Mailbox, clock: Any
) -> None:
    wrong = "Basic " + base64.b64encode(f"{alice.email}:nope".encode()).decode()
    statuses = [(await run(get_session, jmap_server, wrong)).status_code for _ in range(4)]
    assert statuses == [401, 401, 401, 429]
    # The right password is refused too while the budget is spent: no guessing past it.
    assert (await run(get_session, jmap_server, alice.basic)).status_code == 429
    clock.advance(1)
    assert (await run(get_session, jmap_server, alice.basic)).status_code == 200


async def test_authenticated_requests_spend_the_principal_budget(
    jmap_server: Server, alice: Mailbox, db: Any, clock: Any
) -> None:
    bob = await make_mailbox(db, "bob@other.test")
    client = jmap_server.client(alice.email)
    await run(lambda: client.jmap_session)
    for _ in range(39):
        await run(client.request, MailboxGet(ids=[]))
    over = await jmap_server.post(alice.basic, {"using": MAIL, "methodCalls": []})
    assert over.status_code == 429 and int(over.headers["Retry-After"]) >= 1
    # Another principal has a budget of its own.
    assert (await run(get_session, jmap_server, bob.basic)).status_code == 200
    clock.advance(60)
    assert (
        await jmap_server.post(alice.basic, {"using": MAIL, "methodCalls": []})
    ).status_code == 200
