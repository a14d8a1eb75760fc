"""Basic and Bearer authentication, 401 challenges, the sign-in budget, per-principal limits."""

from __future__ import annotations

import base64
import secrets
from typing import Any

import pytest
import requests

from common.passwords import hash_password
from common.settings import Settings
from oauth import rfc9068
from oauth.rfc9068 import AccessTokenGrant, build_claims
from tests.mta import factories
from tests.mta.jmap.conftest import MAIL, Mailbox, Server, run

AUDIENCE = "http://localhost:4300/oauth"  # the gateway's issuer for PUBLIC_URL in tests


def issue(settings: Settings, number: int, *, scope: str = "openid mail", **over: Any) -> str:
    """An access token exactly as this project's OAuth server signs one (rfc9068)."""
    now = int(over.pop("now", 1_893_499_200))  # the ManualClock's 2030-01-01 12:00 UTC
    grant = AccessTokenGrant(
        jti=secrets.token_hex(8),
        client_id="mail-app",
        user_id=number,
        scope=scope,
        issued_at=now,
        expires_at=over.pop("exp", now + 3600),
    )
    claims = build_claims(
        grant, {"sub": str(number)}, issuer=AUDIENCE, audience=over.pop("aud", AUDIENCE)
    )
    return rfc9068.sign(claims, over.pop("secret", settings.secret))


async def number_of(db: Any, account_id: str) -> int:
    return int(await db.fetch_val("SELECT number FROM mail.accounts WHERE id = %s", (account_id,)))


def get_session(server: Server, authorization: str | None) -> requests.Response:
    headers = {"Authorization": authorization} if authorization else {}
    return requests.get(f"{server.url}/.well-known/jmap", headers=headers, timeout=10)


async def test_no_or_wrong_credentials_get_401_with_both_challenges(
    jmap_server: Server, alice: Mailbox
) -> None:
    for authorization in (None, "Basic " + "bm9wZTpub3Bl", "Bearer not.a.token", "Digest x"):
        answer = await run(get_session, jmap_server, authorization)
        assert answer.status_code == 401, authorization
        challenges = answer.raw.headers.getlist("WWW-Authenticate")
        assert any(c.startswith('Basic realm="JMAP"') for c in challenges)
        assert any(c.startswith('Bearer realm="JMAP"') for c in challenges)
    wrong = jmap_server.client(alice.email, "not the password")
    with pytest.raises(requests.HTTPError) as raised:
        await run(lambda: wrong.jmap_session)
    assert raised.value.response.status_code == 401
    bad_token = await run(get_session, jmap_server, "Bearer x.y.z")
    assert 'error="invalid_token"' in ",".join(bad_token.raw.headers.getlist("WWW-Authenticate"))


async def test_a_bearer_token_opens_every_address_of_the_panel_account(
    jmap_server: Server, alice: Mailbox, db: Any, settings: Settings
) -> None:
    other = await factories.address(db, alice.domain_id, "bob")
    token = issue(settings, await number_of(db, alice.account_id))
    client = jmap_server.token_client(token)
    await run(lambda: client.jmap_session)
    assert client.account_id == alice.address_id  # the oldest address is primary
    accounts = (await run(get_session, jmap_server, f"Bearer {token}")).json()["accounts"]
    assert set(accounts) == {alice.address_id, other}
    assert accounts[other]["name"] == "bob@example.test"
    # Each address is its own account with its own mailboxes.
    answer = await jmap_server.post(
        f"Bearer {token}",
        {
            "using": MAIL,
            "methodCalls": [
                ["Mailbox/get", {"accountId": other, "ids": None, "properties": ["role"]}, "0"],
                ["Mailbox/get", {"accountId": alice.address_id, "properties": ["id"]}, "1"],
            ],
        },
    )
    lists = [r[1]["list"] for r in answer.json()["methodResponses"]]
    assert len(lists[0]) == 6 and len(lists[1]) == 6
    assert not {m["id"] for m in lists[0]} & {m["id"] for m in lists[1]}
    # Basic with one address's password sees only that address.
    assert set((await run(get_session, jmap_server, alice.basic)).json()["accounts"]) == {
        alice.address_id
    }
    forbidden = await jmap_server.post(
        alice.basic,
        {"using": MAIL, "methodCalls": [["Mailbox/get", {"accountId": other}, "0"]]},
    )
    assert forbidden.json()["methodResponses"][0][1]["type"] == "accountNotFound"


async def test_bearer_tokens_are_checked_for_audience_scope_expiry_signature_and_revocation(
    jmap_server: Server, alice: Mailbox, db: Any, settings: Settings
) -> None:
    number = await number_of(db, alice.account_id)
    cases = {
        "audience": issue(settings, number, aud="https://elsewhere.test/oauth"),
        "expired": issue(settings, number, exp=1_893_499_100),
        "signature": issue(settings, number, secret="s" * 40),
    }
    for why, token in cases.items():
        answer = await run(get_session, jmap_server, f"Bearer {token}")
        assert answer.status_code == 401, why
    no_scope = await run(
        get_session, jmap_server, f"Bearer {issue(settings, number, scope='openid')}"
    )
    assert no_scope.status_code == 403
    assert 'error="insufficient_scope"' in no_scope.headers["WWW-Authenticate"]
    jmap_scope = issue(settings, number, scope="urn:ietf:params:jmap:mail")
    assert (await run(get_session, jmap_server, f"Bearer {jmap_scope}")).status_code == 200
    revoked = issue(settings, number)
    jti = rfc9068.decode(revoked, settings.secret, verify_exp=False, now=0)["jti"]  # type: ignore[index]
    assert (await run(get_session, jmap_server, f"Bearer {revoked}")).status_code == 200
    await db.execute(
        "INSERT INTO oauth.oauth_revoked_access_tokens (jti, client_id, revoked_at, expires_at)"
        " VALUES (%s, 'mail-app', now(), now() + interval '1 hour')",
        (jti,),
    )
    assert (await run(get_session, jmap_server, f"Bearer {revoked}")).status_code == 401


async def test_a_password_change_ends_basic_sign_in_at_once(
    jmap_server: Server, alice: Mailbox, db: Any
) -> None:
    """A Basic credential proven by one request is taken again without a hash, but
    only while the stored hash is unchanged (docs/mail.md, "Proven passwords")."""
    assert (await run(get_session, jmap_server, alice.basic)).status_code == 200
    await db.execute(
        "UPDATE mail.addresses SET password_hash = %s WHERE id = %s",
        (await hash_password("a new passphrase"), alice.address_id),
    )
    assert (await run(get_session, jmap_server, alice.basic)).status_code == 401
    renewed = "Basic " + base64.b64encode(f"{alice.email}:a new passphrase".encode()).decode()
    assert (await run(get_session, jmap_server, renewed)).status_code == 200
