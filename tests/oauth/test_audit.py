"""The audit hook: an event per security-relevant move, with request context, no secrets."""

from __future__ import annotations

import json

from tests.oauth.conftest import ADMIN, ALICE, OAuthServer
from tests.oauth.host import USER_HEADER, TestHost


async def test_events_of_a_whole_grant(oauth_server: OAuthServer, host: TestHost):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        tokens = await oauth_server.tokens(oauth)
        await oauth.refresh_token(oauth_server.url("/token"), refresh_token=tokens["refresh_token"])
        await oauth.revoke_token(oauth_server.url("/revoke"), token=tokens["access_token"])
    await oauth_server.http.post(
        oauth_server.admin_url(f"/clients/{client['id']}/rotate-secret"),
        headers={USER_HEADER: str(ADMIN)},
    )
    assert host.event_names() == [
        "oauth.client.created",
        "oauth.authorization.approved",
        "oauth.token.issued",
        "oauth.token.refreshed",
        "oauth.token.revoked",
        "oauth.client.secret_rotated",
    ]
    approved = host.events[1]
    assert approved["client_id"] == client["client_id"]
    assert approved["user_id"] == ALICE
    assert approved["ip"] == "127.0.0.1"
    assert approved["user_agent"].startswith("python-httpx")
    assert approved["at"]
    # No token, code or secret ever reaches the hook.
    dumped = json.dumps(host.events)
    for secret in (tokens["access_token"], tokens["refresh_token"], client["client_secret"]):
        assert secret not in dumped


async def test_request_context_comes_from_the_host(start_oauth, host: TestHost):
    srv = await start_oauth(
        request_context=lambda request: {"ip": "203.0.113.7", "user_agent": "consent-ui"}
    )
    await srv.create_client()
    assert host.events[-1]["ip"] == "203.0.113.7"
    assert host.events[-1]["user_agent"] == "consent-ui"


async def test_a_failing_hook_never_fails_the_request(start_oauth):
    def broken(event: dict) -> None:
        raise RuntimeError("audit store down")

    srv = await start_oauth(audit=broken)
    created = await srv.create_client()
    assert created["client_id"]


async def test_async_hook_is_awaited(start_oauth):
    seen: list[str] = []

    async def hook(event: dict) -> None:
        seen.append(event["event"])

    srv = await start_oauth(audit=hook)
    await srv.create_client()
    assert seen == ["oauth.client.created"]
