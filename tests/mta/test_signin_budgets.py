"""One sign-in rule for the mail apps' doors (docs/mail.md, "Failed sign-ins").

IMAP and POP3 run side by side on one database: an unknown address and a
wrong password read the same on each, and every failure, whichever door and
whichever reason, spends one budget of the client address, after which even
the right password is refused on both. No budget is kept per mailbox address.
"""

from __future__ import annotations

import asyncio
import poplib
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

import pytest

from common.runtime import Runtime
from mta.access.signin import SignIn
from mta.context import MtaContext
from mta.imap import server as imap_server
from mta.settings import MtaSettings
from tests.mta import sending
from tests.mta.access import access_config, client_tls, daemons, imap_login
from tests.mta.sending import Sender

FAILURES = 4  # SUBMISSION_AUTH_FAILURES here
NOBODY = "nobody@example.test"


@dataclass(frozen=True)
class Doors:
    imaps: int
    pop3s: int
    ctx: MtaContext


@pytest.fixture
def config(mta_config: MtaSettings) -> MtaSettings:
    return replace(
        access_config(mta_config, submission_auth_failures=FAILURES),
        imap_host="127.0.0.1",
        imap_port=0,
        imaps_port=0,
        smtp_error_sleep=0.0,
    )


@pytest.fixture
async def doors(runtime: Runtime, config: MtaSettings) -> AsyncIterator[Doors]:
    ctx = MtaContext.build(runtime, config)
    async with imap_server.serve(ctx) as servers, daemons(runtime, config) as ports:
        yield Doors(imap_server.bound_ports(servers)[1], ports.pop3s, ctx)


@pytest.fixture
async def alice(runtime: Runtime) -> Sender:
    return await sending.hosted_sender(runtime.db)


def pop3_login(port: int, login: str, password: str) -> str:
    client = poplib.POP3_SSL("127.0.0.1", port, timeout=10, context=client_tls())
    try:
        client.user(login)
        return client.pass_(password).decode()
    except poplib.error_proto as exc:
        return exc.args[0].decode()
    finally:
        client.close()


async def test_unknown_and_wrong_answer_alike_and_spend_one_budget_over_imap_and_pop3(
    doors: Doors, alice: Sender
) -> None:
    async def imap(login: str, password: str) -> str:
        return await asyncio.to_thread(imap_login, doors.imaps, login, password)

    async def pop3(login: str, password: str) -> str:
        return await asyncio.to_thread(pop3_login, doors.pop3s, login, password)

    # Answers: the same for an unknown address and a wrong password, door by door.
    imap_unknown = await imap(NOBODY, "a guess")
    imap_wrong = await imap(alice.email, "a guess")
    pop3_unknown = await pop3(NOBODY, "a guess")
    assert imap_unknown == imap_wrong and "[AUTHENTICATIONFAILED]" in imap_wrong
    # Three failures (two unknown, one wrong, over two doors) of FAILURES: still open.
    assert await imap(alice.email, alice.password) == "OK"
    assert (await pop3(alice.email, alice.password)).startswith("+OK")
    pop3_wrong = await pop3(alice.email, "a guess")
    assert pop3_unknown == pop3_wrong == "-ERR [AUTH] invalid user name or password"

    # The fourth failure spent the client address's budget on both doors at once.
    imap_after = await imap(alice.email, alice.password)
    pop3_after = await pop3(alice.email, alice.password)
    assert "[UNAVAILABLE]" in imap_after
    assert pop3_after == "-ERR [SYS/TEMP] too many failed sign-ins; try again later"
    # An unknown address is refused the same way once the budget is gone.
    assert await imap(NOBODY, "a guess") == imap_after

    # The budget is the client address's, not the mailbox's: the owner, from
    # elsewhere, still signs in after the failures named their address.
    elsewhere = await SignIn.of(doors.ctx).attempt("test", "192.0.2.7", alice.email, alice.password)
    assert getattr(elsewhere, "email", None) == alice.email
