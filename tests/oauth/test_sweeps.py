"""Expiry sweeps, alone and together, and their hourly job in the gateway."""

from __future__ import annotations

from oauth import (
    sweep_authorization_codes,
    sweep_client_auth_failures,
    sweep_device_codes,
    sweep_expired,
    sweep_refresh_tokens,
)
from tests.oauth.conftest import OAuthServer


async def count(srv: OAuthServer, table: str) -> int:
    return int(await srv.config.db.fetch_val(f"SELECT count(*) FROM oauth.{table}"))


async def make_records(srv: OAuthServer) -> None:
    client = await srv.create_client(public=True)
    async with srv.oauth_client(client) as oauth:
        tokens = await srv.tokens(oauth)
        await oauth.revoke_token(srv.url("/revoke"), token=tokens["access_token"])
    await srv.form("/device/authorize", {"client_id": client["client_id"]})


async def test_nothing_live_is_swept(oauth_server: OAuthServer):
    await make_records(oauth_server)
    result = await sweep_expired(oauth_server.server)
    assert (result.authorization_codes, result.refresh_tokens, result.device_codes) == (0, 0, 0)


async def test_each_sweep_removes_its_expired_records(oauth_server: OAuthServer, clock):
    await make_records(oauth_server)
    clock.advance(61)
    assert await sweep_authorization_codes(oauth_server.server) == 1
    assert await count(oauth_server, "oauth_authorization_codes") == 0
    clock.advance(600)
    assert await sweep_device_codes(oauth_server.server) == 1
    assert await count(oauth_server, "oauth_refresh_tokens") == 1
    clock.advance(days=31)
    assert await sweep_refresh_tokens(oauth_server.server) == 1
    assert await count(oauth_server, "oauth_refresh_tokens") == 0
    assert await count(oauth_server, "oauth_revoked_access_tokens") == 0


async def test_failure_counts_are_forgotten_after_their_window_and_lock(
    oauth_server: OAuthServer, clock
):
    client = await oauth_server.create_client()
    for _ in range(6):
        await oauth_server.form("/introspect", {"token": "x"}, auth=(client["client_id"], "wrong"))
    clock.advance(14 * 60)
    assert await sweep_client_auth_failures(oauth_server.server) == 0
    clock.advance(61)
    assert await sweep_client_auth_failures(oauth_server.server) == 1
    assert await count(oauth_server, "oauth_client_auth_failures") == 0


async def test_sweep_expired_runs_all_three(oauth_server: OAuthServer, clock):
    await make_records(oauth_server)
    clock.advance(days=31)
    result = await sweep_expired(oauth_server.server)
    assert (result.authorization_codes, result.refresh_tokens, result.device_codes) == (1, 1, 1)


async def test_gateway_runs_the_sweep_hourly_on_the_job_queue(runtime, clock, db):
    from gateway.app import build_app

    build_app(runtime)  # builds the services, which register their jobs
    assert "oauth.sweep_expired" in runtime.jobs.kinds
    await db.execute(
        "INSERT INTO oauth.oauth_device_codes (device_code, user_code, client_id, scope,"
        " expires_at) VALUES ('d', 'BCDFGHJK', 'c', 'openid', %s)",
        (clock.now(),),
    )
    clock.advance(1)
    await runtime.jobs.run_due()
    assert await db.fetch_val("SELECT count(*) FROM oauth.oauth_device_codes") == 0
    job = await db.fetch_one(
        "SELECT state, key FROM common.jobs WHERE kind = 'oauth.sweep_expired'"
    )
    assert job["state"] == "done"
    assert job["key"].startswith("every:oauth.sweep_expired:")
