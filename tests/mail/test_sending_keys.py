"""API keys and suppressions: session only, tokens shown once and stored hashed."""

from __future__ import annotations

import pytest
import resend
from resend.exceptions import ResendError

from common.crypto import sha256_hex
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import settings  # noqa: F401
from tests.mail.sending_helpers import api_key, bearer, sending_domain

MESSAGE = {"from": "hello@example.com", "to": "ann@example.org", "subject": "Hi", "text": "x"}


async def test_create_list_revoke_a_key(client, runtime, clock):
    _, headers = await signed_in(runtime)
    resp = await client.post(
        "/api/api-keys",
        json={"name": "Production", "permission": "sending_access"},
        headers=headers,
    )
    assert resp.status == 201
    created = await resp.json()
    token = created["token"]
    assert token.startswith("re_") and len(token) > 40
    assert created["permission"] == "sending_access" and created["last_used_at"] is None

    # Stored as SHA-256 only; the token is never in the table, nor in a later answer.
    row = await runtime.db.fetch_one("SELECT * FROM mail.api_keys WHERE id = %s", (created["id"],))
    assert row["token_hash"] == sha256_hex(token)
    assert token not in str(row)
    listed = await (await client.get("/api/api-keys", headers=headers)).json()
    assert listed["object"] == "list" and listed["total"] == 1
    (item,) = listed["data"]
    assert "token" not in item and item["token_prefix"] == token[:11]
    assert item["name"] == "Production"

    # Using it records when.
    clock.advance(5)
    await client.get("/api/emails/batch", headers=bearer(token))
    listed = await (await client.get("/api/api-keys", headers=headers)).json()
    assert listed["data"][0]["last_used_at"] is not None

    resp = await client.delete(f"/api/api-keys/{created['id']}", headers=headers)
    assert resp.status == 200
    assert await resp.json() == {"object": "api_key", "id": created["id"], "deleted": True}
    resp = await client.post("/api/emails", json=MESSAGE, headers=bearer(token))
    assert resp.status == 403 and (await resp.json())["name"] == "invalid_api_key"
    resp = await client.delete(f"/api/api-keys/{created['id']}", headers=headers)
    assert resp.status == 404


async def test_key_fields_are_checked(client, runtime):
    _, headers = await signed_in(runtime)
    for body, status in (
        ({}, 422),
        ({"name": "x", "permission": "admin"}, 400),
        ({"name": "x" * 51}, 400),
        ({"name": "x", "domain_id": "00000000-0000-0000-0000-000000000000"}, 400),
        (
            {
                "name": "x",
                "permission": "sending_access",
                "domain_id": "00000000-0000-0000-0000-000000000000",
            },
            404,
        ),
    ):
        resp = await client.post("/api/api-keys", json=body, headers=headers)
        assert resp.status == status, (body, await resp.text())
    # Resend's default permission.
    resp = await client.post("/api/api-keys", json={"name": "x"}, headers=headers)
    assert (await resp.json())["permission"] == "full_access"


async def test_another_accounts_key_is_404(client, runtime):
    _, headers = await signed_in(runtime)
    _, other = await signed_in(runtime)
    resp = await client.post("/api/api-keys", json={"name": "mine"}, headers=headers)
    key_id = (await resp.json())["id"]
    assert (await client.delete(f"/api/api-keys/{key_id}", headers=other)).status == 404
    assert (await (await client.get("/api/api-keys", headers=other)).json())["total"] == 0


@pytest.mark.parametrize("permission", ["full_access", "sending_access"])
async def test_no_key_reaches_keys_or_suppressions(client, runtime, sdk, permission):
    _, headers = await signed_in(runtime)
    token = await api_key(client, headers, permission=permission)
    key_id = (await (await client.get("/api/api-keys", headers=headers)).json())["data"][0]["id"]
    for method, path, body in (
        ("GET", "/api/api-keys", None),
        ("POST", "/api/api-keys", {"name": "escalate"}),
        ("DELETE", f"/api/api-keys/{key_id}", None),
        ("GET", "/api/suppressions", None),
        ("POST", "/api/suppressions", {"email": "x@example.org"}),
        ("DELETE", "/api/suppressions/00000000-0000-0000-0000-000000000000", None),
    ):
        resp = await client.request(method, path, json=body, headers=bearer(token))
        answer = await resp.json()
        assert resp.status == 403, (method, path, answer)
        assert answer == {"statusCode": 403, "name": "forbidden", "message": answer["message"]}
    # The SDK's own calls get the same refusal, in the same shape.
    for call, args in (
        (resend.ApiKeys.list, ()),
        (resend.ApiKeys.create, ({"name": "escalate"},)),
        (resend.Suppressions.list, ()),
        (resend.Suppressions.add, ({"email": "x@example.org"},)),
    ):
        with pytest.raises(ResendError) as refused:
            await sdk(token, call, *args)
        assert (refused.value.code, refused.value.error_type) == (403, "forbidden")
    # Nothing was created by the key.
    assert (await (await client.get("/api/api-keys", headers=headers)).json())["total"] == 1
    # And signed out is 401.
    assert (await client.get("/api/api-keys")).status == 401
    assert (await client.get("/api/suppressions")).status == 401


async def test_suppressions_add_list_remove_and_block_sending(client, runtime, dns_server):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    resp = await client.post(
        "/api/suppressions", json={"email": "Ann@Example.org"}, headers=headers
    )
    assert resp.status == 201
    added = await resp.json()
    assert added["object"] == "suppression" and added["email"] == "ann@example.org"
    assert added["origin"] == "manual" and added["source_id"] is None
    resp = await client.post(
        "/api/suppressions", json={"email": "ann@example.org"}, headers=headers
    )
    assert resp.status == 409
    assert await resp.json() == {
        "statusCode": 409,
        "name": "conflict",
        "message": "ann@example.org is already suppressed",
    }
    resp = await client.post("/api/suppressions", json={"email": "nope"}, headers=headers)
    assert resp.status == 400
    listed = await (await client.get("/api/suppressions?search=ann", headers=headers)).json()
    assert [s["email"] for s in listed["data"]] == ["ann@example.org"] and listed["total"] == 1

    # Mail to a suppressed address is not attempted, and says so.
    token = await api_key(client, headers)
    sent = await (await client.post("/api/emails", json=MESSAGE, headers=bearer(token))).json()
    got = await (await client.get(f"/api/emails/{sent['id']}", headers=bearer(token))).json()
    assert [r["status"] for r in got["recipients"]] == ["suppressed"]

    # Another account neither sees nor removes it.
    _, other = await signed_in(runtime)
    assert (await (await client.get("/api/suppressions", headers=other)).json())["total"] == 0
    assert (await client.delete(f"/api/suppressions/{added['id']}", headers=other)).status == 404

    resp = await client.delete(f"/api/suppressions/{added['id']}", headers=headers)
    assert resp.status == 200 and (await resp.json())["deleted"] is True
    sent = await (await client.post("/api/emails", json=MESSAGE, headers=bearer(token))).json()
    got = await (await client.get(f"/api/emails/{sent['id']}", headers=bearer(token))).json()
    assert [r["status"] for r in got["recipients"]] == ["queued"]


async def test_api_key_requests_spend_the_accounts_rate_limit(make_client, runtime):
    client = await make_client({"RATE_LIMIT_PER_SECOND": "3", "RATE_LIMIT_BURST": "3"})
    _, headers = await signed_in(runtime)
    token = await api_key(client, headers)  # spends one
    statuses = []
    for _ in range(3):
        resp = await client.get("/api/emails", headers=bearer(token))
        statuses.append(resp.status)
    assert statuses[-1] == 429
    body = await resp.json()
    assert body["name"] == "rate_limit_exceeded" and resp.headers["retry-after"]
    # The session of the same account shares the budget: one principal.
    assert (await client.get("/api/emails", headers=headers)).status == 429


async def test_a_key_is_not_ambient_so_no_origin_check(client, runtime, dns_server):
    # A key is sent on purpose by its holder (no browser attaches it), so a page of
    # another origin cannot forge with it: the origin check does not apply.
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    token = await api_key(client, headers)
    resp = await client.post(
        "/api/emails", json=MESSAGE, headers={**bearer(token), "Origin": "https://app.example"}
    )
    assert resp.status == 200, await resp.text()


async def test_idempotency_keys_are_swept_after_24_hours(client, runtime, clock, dns_server):
    from mail.service import SWEEP_JOB

    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    token = await api_key(client, headers)
    retry = {**bearer(token), "Idempotency-Key": "order-1"}
    assert (await client.post("/api/emails", json=MESSAGE, headers=retry)).status == 200
    count = "SELECT count(*) FROM mail.idempotency_keys"

    async def sweep() -> None:
        await runtime.jobs.enqueue(SWEEP_JOB, key=f"sweep-{clock.now()}")
        await runtime.jobs.run_due()

    await sweep()
    assert await runtime.db.fetch_val(count) == 1
    clock.advance(hours=24, seconds=1)
    await sweep()
    assert await runtime.db.fetch_val(count) == 0


async def test_wrong_keys_spend_the_client_ips_budget(make_client):
    client = await make_client({"RATE_LIMIT_PER_SECOND": "2", "RATE_LIMIT_BURST": "2"})
    names = []
    for _ in range(3):
        resp = await client.post("/api/emails", json=MESSAGE, headers=bearer("re_00000000_guess"))
        names.append((resp.status, (await resp.json())["name"]))
    assert names == [
        (403, "invalid_api_key"),
        (403, "invalid_api_key"),
        (429, "rate_limit_exceeded"),
    ]


async def test_only_a_bearer_header_on_api_paths_is_read_as_a_key(client, runtime):
    _, headers = await signed_in(runtime)
    # A proxy's Basic credentials in front of the panel leave the session alone.
    resp = await client.get(
        "/api/auth/me", headers={**headers, "Authorization": "Basic dXNlcjpwYXNz"}
    )
    assert resp.status == 200
    # Outside /api/ (JMAP's paths take their own Bearer tokens) the header is not ours.
    resp = await client.get("/.well-known/jmap", headers={"Authorization": "Bearer re_junk"})
    assert "invalid_api_key" not in await resp.text()
    # "Bearer" with nothing after it is no credential at all, not the cookie's either.
    resp = await client.get("/api/emails", headers={**headers, "Authorization": "Bearer "})
    assert resp.status == 401 and (await resp.json())["name"] == "missing_api_key"
