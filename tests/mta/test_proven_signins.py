"""A password a mail app proved is not hashed again on its next connections
(docs/mail.md, "Proven passwords"): only successes, for AUTH_CACHE_SECONDS,
only while the stored hash is unchanged, and one hash for the same sign-in
arriving on several connections at once.

The hashing is counted by wrapping the directory's argon2 check: what a user
notices is the CPU (and the wait) each sign-in costs, and the count is what
says whether it was spent.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from common.clock import ManualClock
from common.passwords import hash_password, verify_password
from common.runtime import Runtime
from mail.directory import principals
from mail.directory.principals import Principal, ProvenSignIns
from mta.settings import MtaSettings
from tests.mta import sending
from tests.mta.access import Doors, imap_and_submission, imap_login, smtp_login
from tests.mta.sending import Sender

SECONDS = 900


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The passwords the directory hashed, in order."""
    seen: list[str] = []

    async def counted(stored: str | None, password: str) -> bool:
        seen.append(password)
        return await verify_password(stored, password)

    monkeypatch.setattr(principals, "verify_password", counted)
    return seen


@pytest.fixture
async def doors(runtime: Runtime, mta_config: MtaSettings) -> AsyncIterator[Doors]:
    async with imap_and_submission(runtime, mta_config, auth_cache_seconds=SECONDS) as doors:
        yield doors


@pytest.fixture
async def alice(runtime: Runtime) -> Sender:
    return await sending.hosted_sender(runtime.db)


async def imap(doors: Doors, login: str, password: str) -> str:
    return await asyncio.to_thread(imap_login, doors.imaps, login, password)


async def test_a_proven_password_signs_in_again_on_any_door_without_a_hash(
    doors: Doors, alice: Sender, hashes: list[str]
) -> None:
    assert await imap(doors, alice.email, alice.password) == "OK"
    assert len(hashes) == 1
    # The next connections, over IMAP and over submission, in another case.
    assert await imap(doors, alice.email, alice.password) == "OK"
    code = await asyncio.to_thread(
        smtp_login, doors.submissions, alice.email.upper(), alice.password
    )
    assert code == 235
    assert len(hashes) == 1


async def test_a_wrong_password_is_hashed_every_time_and_never_taken(
    doors: Doors, alice: Sender, hashes: list[str]
) -> None:
    assert await imap(doors, alice.email, alice.password) == "OK"
    for _ in range(2):
        assert "[AUTHENTICATIONFAILED]" in await imap(doors, alice.email, "a guess")
    assert hashes == [alice.password, "a guess", "a guess"]
    # Nothing the cache keeps is the password itself.
    assert alice.password not in repr(vars(doors.ctx.proven))


async def test_a_password_change_ends_it_at_once(
    doors: Doors, runtime: Runtime, alice: Sender, hashes: list[str]
) -> None:
    assert await imap(doors, alice.email, alice.password) == "OK"
    await runtime.db.execute(
        "UPDATE mail.addresses SET password_hash = %s WHERE id = %s",
        (await hash_password("a new passphrase"), alice.address_id),
    )
    assert "[AUTHENTICATIONFAILED]" in await imap(doors, alice.email, alice.password)
    assert await imap(doors, alice.email, "a new passphrase") == "OK"
    assert len(hashes) == 3


async def test_a_removed_address_is_refused_though_its_password_was_proven(
    doors: Doors, runtime: Runtime, alice: Sender
) -> None:
    assert await imap(doors, alice.email, alice.password) == "OK"
    await runtime.db.execute("DELETE FROM mail.addresses WHERE id = %s", (alice.address_id,))
    assert "[AUTHENTICATIONFAILED]" in await imap(doors, alice.email, alice.password)


async def test_it_lasts_auth_cache_seconds(
    doors: Doors, clock: ManualClock, alice: Sender, hashes: list[str]
) -> None:
    assert await imap(doors, alice.email, alice.password) == "OK"
    clock.advance(SECONDS - 1)
    assert await imap(doors, alice.email, alice.password) == "OK"
    assert len(hashes) == 1
    clock.advance(2)
    assert await imap(doors, alice.email, alice.password) == "OK"
    assert len(hashes) == 2


async def test_connections_signing_in_at_once_share_one_hash(
    doors: Doors, alice: Sender, hashes: list[str]
) -> None:
    answers = await asyncio.gather(*(imap(doors, alice.email, alice.password) for _ in range(5)))
    assert answers == ["OK"] * 5
    assert len(hashes) == 1


async def test_zero_seconds_hashes_every_sign_in(
    runtime: Runtime, mta_config: MtaSettings, alice: Sender, hashes: list[str]
) -> None:
    async with imap_and_submission(runtime, mta_config, auth_cache_seconds=0) as doors:
        for _ in range(2):
            assert await imap(doors, alice.email, alice.password) == "OK"
    assert len(hashes) == 2


async def test_a_check_whose_client_went_away_leaves_the_waiting_sign_ins_their_own() -> None:
    """The first of two identical sign-ins is cancelled mid-check (its client hung
    up): the second is not refused with it, it checks for itself."""
    proven = ProvenSignIns(ManualClock(), SECONDS)
    checking, checks = asyncio.Event(), []
    alice = Principal("address-id", "account-id", "alice@example.test")

    async def hangs() -> Principal | None:
        checks.append("first")
        checking.set()
        await asyncio.Event().wait()  # until cancelled
        return None

    async def answers() -> Principal | None:
        checks.append("second")
        return alice

    first = asyncio.create_task(proven.once(alice.email, "pw", hangs))
    await checking.wait()
    second = asyncio.create_task(proven.once(alice.email, "pw", answers))
    await asyncio.sleep(0)  # the second is waiting on the first
    first.cancel()
    assert await second == alice
    assert checks == ["first", "second"]
    with pytest.raises(asyncio.CancelledError):
        await first
