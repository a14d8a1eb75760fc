"""Mailbox recovery: identical answers, one-time short-lived tokens, rate limits."""

from __future__ import annotations

from typing import Any

import pytest

from common.passwords import verify_password
from mail.recovery import service as recovery
from tests.mail.factories import outbox, signed_in, token_from
from tests.mail.hosting_fixtures import add_domain, settings  # noqa: F401

OLD_PASSWORD = "the old mailbox password"
NEW_PASSWORD = "a brand new mailbox password"


async def mailbox(client: Any, runtime: Any, recovery_email: str | None) -> dict[str, Any]:
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers, "rescue.example")
    body: dict[str, Any] = {"local_part": "ann", "password": OLD_PASSWORD}
    if recovery_email:
        body["recovery_email"] = recovery_email
    resp = await client.post(f"/api/domains/{domain['id']}/addresses", json=body, headers=headers)
    assert resp.status == 201, await resp.text()
    return dict(await resp.json())


async def request(client: Any, email: str) -> Any:
    return await client.post("/api/recover/request", json={"email": email})


async def link_token(runtime: Any) -> str:
    await runtime.jobs.run_due()
    messages = [m for row, m in await outbox(runtime) if row["kind"] == "mailbox_recovery"]
    return token_from(messages[-1])


async def test_check_says_whether_a_domain_offers_recovery_and_no_more(client, runtime):
    await mailbox(client, runtime, "ann@elsewhere.example")
    yes = await (await client.get("/api/recover/check?domain=Rescue.Example")).json()
    assert yes == {"object": "recovery_check", "domain": "rescue.example", "available": True}
    no = await (await client.get("/api/recover/check", params={"domain": "nowhere.example"})).json()
    assert no["available"] is False and set(no) == {"object", "domain", "available"}
    for bad in ("", "not a domain"):
        resp = await client.get("/api/recover/check", params={"domain": bad})
        assert resp.status == 400 and (await resp.json())["name"] == "invalid_parameter"


async def test_a_domain_without_recovery_addresses_offers_none(client, runtime):
    await mailbox(client, runtime, None)
    no = await (await client.get("/api/recover/check?domain=rescue.example")).json()
    assert no["available"] is False


async def test_request_answers_identically_for_existing_and_unknown_addresses(client, runtime):
    await mailbox(client, runtime, "ann@elsewhere.example")
    answers = []
    for email in ("ann@rescue.example", "nobody@rescue.example", "ann@unknown.example"):
        resp = await request(client, email)
        # A request id is new on every answer by design: it says nothing of the address.
        volatile = {"date", "ratelimit-remaining", "ratelimit-reset", "x-request-id"}
        headers = {k.lower(): v for k, v in resp.headers.items() if k.lower() not in volatile}
        answers.append((resp.status, headers, await resp.read()))
    assert answers[0][0] == 202
    assert answers[0] == answers[1] == answers[2]
    # The same work for each: a job, whose lookup the reply never waits for.
    jobs = await runtime.db.fetch_val(
        "SELECT count(*) FROM common.jobs WHERE kind = %s", (recovery.REQUEST_JOB,)
    )
    assert jobs == 3
    await runtime.jobs.run_due()
    sent = [(row, m) for row, m in await outbox(runtime) if row["kind"] == "mailbox_recovery"]
    [(row, message)] = sent
    assert row["rcpt_to"] == "ann@elsewhere.example"
    assert "ann@rescue.example" in message["Subject"]
    assert "/recover?token=" in message.get_content()


async def test_reset_sets_the_password_once_and_ends_webmail_sessions(client, runtime, monkeypatch):
    address = await mailbox(client, runtime, "ann@elsewhere.example")
    ended: list[str] = []

    async def end(conn: Any, address_id: str, now: Any) -> int:
        ended.append(address_id)
        return 1

    monkeypatch.setattr(recovery, "end_webmail_sessions", end)
    await request(client, "ann@rescue.example")
    token = await link_token(runtime)
    # Hashed at rest: the database never holds the token itself.
    stored = await runtime.db.fetch_all("SELECT token_hash FROM mail.recovery_tokens")
    assert token not in str(stored)
    short = await client.post("/api/recover/reset", json={"token": token, "password": "short"})
    assert short.status == 400 and "password" in (await short.json())["message"]
    done = await client.post("/api/recover/reset", json={"token": token, "password": NEW_PASSWORD})
    assert done.status == 200, await done.text()
    assert (await done.json())["email"] == "ann@rescue.example"
    stored_hash = await runtime.db.fetch_val(
        "SELECT password_hash FROM mail.addresses WHERE id = %s", (address["id"],)
    )
    assert await verify_password(stored_hash, NEW_PASSWORD)
    assert ended == [address["id"]]
    again = await client.post("/api/recover/reset", json={"token": token, "password": OLD_PASSWORD})
    assert again.status == 400 and (await again.json())["name"] == "validation_error"
    assert await verify_password(
        await runtime.db.fetch_val(
            "SELECT password_hash FROM mail.addresses WHERE id = %s", (address["id"],)
        ),
        NEW_PASSWORD,
    )
    notices = [m for row, m in await outbox(runtime) if row["kind"] == "security_notice"]
    assert any("ann@rescue.example" in m["Subject"] for m in notices)


async def test_a_token_expires_and_a_newer_one_voids_it(client, runtime, clock):
    await mailbox(client, runtime, "ann@elsewhere.example")
    await request(client, "ann@rescue.example")
    first = await link_token(runtime)
    clock.advance(1)  # the outbox lists by time: the newer link last
    await request(client, "ann@rescue.example")
    second = await link_token(runtime)
    assert first != second
    voided = await client.post(
        "/api/recover/reset", json={"token": first, "password": NEW_PASSWORD}
    )
    assert voided.status == 400
    clock.advance(recovery.TOKEN_LIFETIME.total_seconds() + 1)
    late = await client.post("/api/recover/reset", json={"token": second, "password": NEW_PASSWORD})
    assert late.status == 400
    clock.advance(1)
    await request(client, "ann@rescue.example")
    third = await link_token(runtime)
    clock.advance(recovery.TOKEN_LIFETIME.total_seconds() - 60)
    ok = await client.post("/api/recover/reset", json={"token": third, "password": NEW_PASSWORD})
    assert ok.status == 200


@pytest.mark.parametrize("email", ["ann@rescue.example", "nobody@rescue.example"])
async def test_requests_are_limited_per_address_alike(client, runtime, clock, email):
    await mailbox(client, runtime, "ann@elsewhere.example")
    for _ in range(recovery.PER_ADDRESS_PER_HOUR):
        assert (await request(client, email)).status == 202
    refused = await request(client, email)
    assert refused.status == 429 and int(refused.headers["retry-after"]) > 0
    # Another address from the same client still passes; an hour later this one does too.
    assert (await request(client, "someone@rescue.example")).status == 202
    clock.advance(3600)
    assert (await request(client, email)).status == 202


async def test_requests_are_limited_per_ip(client, runtime):
    for n in range(recovery.PER_IP_PER_HOUR):
        assert (await request(client, f"user{n}@rescue.example")).status == 202
    assert (await request(client, "one-more@rescue.example")).status == 429
