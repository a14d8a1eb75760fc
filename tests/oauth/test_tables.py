"""Table names are overridable: a host that created the records under its own names."""

from __future__ import annotations

from oauth import Tables
from tests.oauth.conftest import OAuthServer

RENAMED = {
    "clients": ("oauth_clients", "apps"),
    "authorization_codes": ("oauth_authorization_codes", "app codes"),
    "refresh_tokens": ("oauth_refresh_tokens", "app_refresh"),
    "device_codes": ("oauth_device_codes", "app_devices"),
    "revoked_access_tokens": ("oauth_revoked_access_tokens", "app_denylist"),
    "client_auth_failures": ("oauth_client_auth_failures", "app_auth_failures"),
}


async def test_flows_run_against_renamed_tables(runtime, start_oauth):
    await runtime.db.execute('CREATE SCHEMA "host app"')
    for default, renamed in RENAMED.values():
        await runtime.db.execute(
            f'CREATE TABLE "host app"."{renamed}" (LIKE oauth.{default} INCLUDING ALL)'
        )
    tables = Tables(schema="host app", **{k: v[1] for k, v in RENAMED.items()})
    srv: OAuthServer = await start_oauth(tables=tables)
    client = await srv.create_client()
    async with srv.oauth_client(client) as oauth:
        tokens = await srv.tokens(oauth)
        await oauth.refresh_token(srv.url("/token"), refresh_token=tokens["refresh_token"])
    await srv.form(
        "/device/authorize",
        {"client_id": client["client_id"], "scope": "openid"},
        auth=(client["client_id"], client["client_secret"]),
    )
    await srv.form("/introspect", {"token": "x"}, auth=(client["client_id"], "wrong"))
    counts = {
        name: await runtime.db.fetch_val(f'SELECT count(*) FROM "host app"."{name}"')
        for _, name in RENAMED.values()
    }
    assert counts == {
        "apps": 1,
        "app codes": 1,
        "app_refresh": 2,
        "app_devices": 1,
        "app_denylist": 0,
        "app_auth_failures": 1,
    }
    for default, _ in RENAMED.values():
        assert await runtime.db.fetch_val(f"SELECT count(*) FROM oauth.{default}") == 0


async def test_prepared_statements_survive_discard_and_run_inside_transactions(
    oauth_server: OAuthServer,
):
    client = await oauth_server.create_client()
    store = oauth_server.server.store
    db = oauth_server.config.db
    async with db.connection() as conn:
        assert (await store.get_client(conn, client["client_id"]))["name"] == "Test client"
        from common.db import execute, transaction

        await execute(conn, "DEALLOCATE ALL")
        assert (await store.get_client(conn, client["client_id"]))["name"] == "Test client"
        async with transaction(conn):
            await execute(conn, "DEALLOCATE ALL")
            assert (await store.get_client(conn, client["client_id"]))["id"] == client["id"]
