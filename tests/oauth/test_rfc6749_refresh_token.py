"""Refresh rotation, reuse detection, the concurrent race and the grace window."""

from __future__ import annotations

import asyncio

import pytest
from authlib.integrations.base_client import OAuthError as AuthlibOAuthError

from common.crypto import sha256_hex
from tests.oauth.conftest import ALICE, OAuthServer
from tests.oauth.host import TestHost


async def refresh_form(srv: OAuthServer, client: dict, refresh_token: str, **extra: str):
    return await srv.form(
        "/token",
        {"grant_type": "refresh_token", "refresh_token": refresh_token, **extra},
        auth=(client["client_id"], client["client_secret"]),
    )


async def live_tokens(srv: OAuthServer) -> list[dict]:
    return await srv.config.db.fetch_all(
        "SELECT * FROM oauth.oauth_refresh_tokens WHERE revoked_at IS NULL"
    )


async def test_each_refresh_rotates_and_links_to_its_parent(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        first = await oauth_server.tokens(oauth)
        second = await oauth.refresh_token(
            oauth_server.url("/token"), refresh_token=first["refresh_token"]
        )
        third = await oauth.refresh_token(
            oauth_server.url("/token"), refresh_token=second["refresh_token"]
        )
    assert len({first["refresh_token"], second["refresh_token"], third["refresh_token"]}) == 3
    assert first["access_token"] != second["access_token"]
    rows = await oauth_server.config.db.fetch_all(
        "SELECT token_hash, parent_token_hash, revoked_at FROM oauth.oauth_refresh_tokens"
        " ORDER BY created_at, parent_token_hash NULLS FIRST"
    )
    by_hash = {r["token_hash"]: r for r in rows}
    # Only hashes are stored; the plaintext never is.
    assert sha256_hex(first["refresh_token"]) in by_hash
    assert first["refresh_token"] not in by_hash
    assert by_hash[sha256_hex(second["refresh_token"])]["parent_token_hash"] == sha256_hex(
        first["refresh_token"]
    )
    assert by_hash[sha256_hex(third["refresh_token"])]["parent_token_hash"] == sha256_hex(
        second["refresh_token"]
    )
    assert [r["token_hash"] for r in await live_tokens(oauth_server)] == [
        sha256_hex(third["refresh_token"])
    ]


async def test_reusing_a_rotated_token_burns_the_chain_live_descendant_included(
    oauth_server: OAuthServer, host: TestHost
):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        first = await oauth_server.tokens(oauth)
        second = await oauth.refresh_token(
            oauth_server.url("/token"), refresh_token=first["refresh_token"]
        )
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.refresh_token(
                oauth_server.url("/token"), refresh_token=first["refresh_token"]
            )
        assert err.value.error == "invalid_grant"
        # The thief's (or the victim's) live successor is dead too.
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.refresh_token(
                oauth_server.url("/token"), refresh_token=second["refresh_token"]
            )
        assert err.value.error == "invalid_grant"
        for access in (first["access_token"], second["access_token"]):
            info = await oauth.introspect_token(oauth_server.url("/introspect"), token=access)
            assert info.json() == {"active": False}
    assert await live_tokens(oauth_server) == []
    assert "oauth.refresh_token.reuse_detected" in host.event_names()


async def test_burning_one_chain_leaves_other_grants_alone(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        first = await oauth_server.tokens(oauth)
        other = await oauth_server.tokens(oauth)
        await oauth.refresh_token(oauth_server.url("/token"), refresh_token=first["refresh_token"])
        with pytest.raises(AuthlibOAuthError):
            await oauth.refresh_token(
                oauth_server.url("/token"), refresh_token=first["refresh_token"]
            )
        still = await oauth.refresh_token(
            oauth_server.url("/token"), refresh_token=other["refresh_token"]
        )
    assert still["access_token"]


async def test_concurrent_refreshes_rotate_exactly_once(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        first = await oauth_server.tokens(oauth)
    responses = await asyncio.gather(
        *(refresh_form(oauth_server, client, first["refresh_token"]) for _ in range(6))
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200, 400, 400, 400, 400, 400]
    successors = await oauth_server.config.db.fetch_all(
        "SELECT * FROM oauth.oauth_refresh_tokens WHERE parent_token_hash = %s",
        (sha256_hex(first["refresh_token"]),),
    )
    assert len(successors) == 1
    # Strict mode: the losers' presentations are reuse, so the chain is burned.
    assert await live_tokens(oauth_server) == []


async def test_grace_window_replays_the_same_pair_to_concurrent_refreshes(start_oauth, clock):
    srv = await start_oauth(refresh_grace_seconds=30)
    client = await srv.create_client()
    async with srv.oauth_client(client) as oauth:
        first = await srv.tokens(oauth)
    responses = await asyncio.gather(
        *(refresh_form(srv, client, first["refresh_token"]) for _ in range(4))
    )
    assert [r.status_code for r in responses] == [200] * 4
    bodies = [r.json() for r in responses]
    assert len({b["refresh_token"] for b in bodies}) == 1
    assert len({b["access_token"] for b in bodies}) == 1
    live = await live_tokens(srv)
    assert [r["token_hash"] for r in live] == [sha256_hex(bodies[0]["refresh_token"])]
    # The successor works as usual.
    clock.advance(10)
    nxt = await refresh_form(srv, client, bodies[0]["refresh_token"])
    assert nxt.status_code == 200


async def test_grace_window_covers_a_lost_response_then_closes(start_oauth, clock):
    srv = await start_oauth(refresh_grace_seconds=30)
    client = await srv.create_client()
    async with srv.oauth_client(client) as oauth:
        first = await srv.tokens(oauth)
    lost = (await refresh_form(srv, client, first["refresh_token"])).json()
    clock.advance(20)
    again = (await refresh_form(srv, client, first["refresh_token"])).json()
    assert again["refresh_token"] == lost["refresh_token"]
    assert again["access_token"] == lost["access_token"]
    assert again["expires_in"] == 3600 - 20
    clock.advance(11)
    late = await refresh_form(srv, client, first["refresh_token"])
    assert late.status_code == 400
    assert late.json()["error"] == "invalid_grant"
    # Past the window it is reuse again: the chain burned.
    assert (await refresh_form(srv, client, lost["refresh_token"])).status_code == 400


async def test_grace_window_does_not_replay_once_the_successor_was_used(start_oauth):
    srv = await start_oauth(refresh_grace_seconds=30)
    client = await srv.create_client()
    async with srv.oauth_client(client) as oauth:
        first = await srv.tokens(oauth)
    second = (await refresh_form(srv, client, first["refresh_token"])).json()
    assert (await refresh_form(srv, client, second["refresh_token"])).status_code == 200
    # first's successor (second) is no longer live: presenting first is reuse.
    assert (await refresh_form(srv, client, first["refresh_token"])).status_code == 400
    assert await live_tokens(srv) == []


async def test_scope_may_narrow_but_never_widen(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        first = await oauth_server.tokens(oauth, scope="openid email")
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.refresh_token(
                oauth_server.url("/token"),
                refresh_token=first["refresh_token"],
                scope="openid email mail.read",
            )
        assert err.value.error == "invalid_scope"
        # The refused widening did not consume the token.
        narrowed = await oauth.refresh_token(
            oauth_server.url("/token"), refresh_token=first["refresh_token"], scope="email"
        )
    assert narrowed["scope"] == "email"
    again = await refresh_form(oauth_server, client, narrowed["refresh_token"], scope="openid")
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_scope"


async def test_refresh_token_expires_after_30_days(oauth_server: OAuthServer, clock):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        first = await oauth_server.tokens(oauth)
    clock.advance(days=30, seconds=1)
    resp = await refresh_form(oauth_server, client, first["refresh_token"])
    assert resp.status_code == 400
    assert resp.json()["error"] == "invalid_grant"
    assert "expired" in resp.json()["error_description"]


async def test_another_clients_refresh_token_is_refused_without_burning(
    oauth_server: OAuthServer,
):
    mine = await oauth_server.create_client()
    other = await oauth_server.create_client()
    async with oauth_server.oauth_client(mine) as oauth:
        first = await oauth_server.tokens(oauth)
    stolen = await refresh_form(oauth_server, other, first["refresh_token"])
    assert stolen.status_code == 400
    assert stolen.json()["error"] == "invalid_grant"
    assert (await refresh_form(oauth_server, mine, first["refresh_token"])).status_code == 200


async def test_unknown_refresh_token_is_invalid_grant(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    resp = await refresh_form(oauth_server, client, "not-a-token")
    assert resp.status_code == 400
    assert resp.json()["error"] == "invalid_grant"


async def test_deleted_user_gets_no_more_tokens(oauth_server: OAuthServer, host: TestHost):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        first = await oauth_server.tokens(oauth)
    del host.users[ALICE]
    resp = await refresh_form(oauth_server, client, first["refresh_token"])
    assert resp.status_code == 400
    assert resp.json()["error"] == "invalid_grant"
    assert await live_tokens(oauth_server) == []


async def test_failed_client_authentication_neither_consumes_nor_burns_a_live_token(
    oauth_server: OAuthServer,
):
    """A refusal at client authentication happens before the token is touched.

    The other refusal tests send bogus tokens; this one sends the live one, so a
    drift between the SQL rotation and the client check would show here.
    """
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        first = await oauth_server.tokens(oauth)
    before = await live_tokens(oauth_server)

    wrong_secret = await oauth_server.form(
        "/token",
        {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]},
        auth=(client["client_id"], client["client_secret"] + "x"),
    )
    assert wrong_secret.status_code == 401
    assert wrong_secret.json()["error"] == "invalid_client"
    no_secret = await oauth_server.form(
        "/token",
        {
            "grant_type": "refresh_token",
            "refresh_token": first["refresh_token"],
            "client_id": client["client_id"],
        },
    )
    assert no_secret.status_code == 401
    assert no_secret.json()["error"] == "invalid_client"

    # Nothing rotated, nothing revoked: the same row is still the live one...
    assert await live_tokens(oauth_server) == before
    # ...and the rightful client refreshes with it exactly once.
    ok = await refresh_form(oauth_server, client, first["refresh_token"])
    assert ok.status_code == 200
    assert ok.json()["refresh_token"] != first["refresh_token"]
