"""The OAuth server inside the real `python -m gateway` process, driven by Authlib."""

from __future__ import annotations

import json

import httpx
import psycopg2
import pytest
from authlib.integrations.base_client import OAuthError as AuthlibOAuthError
from authlib.integrations.httpx_client import AsyncOAuth2Client

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def insert_public_client(database_url: str, client_id: str) -> None:
    with psycopg2.connect(database_url) as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO oauth.oauth_clients (client_id, name, redirect_uris, allowed_scopes)"
            " VALUES (%s, 'TV app', %s, %s)",
            (client_id, json.dumps(["https://tv.example/cb"]), json.dumps(["openid"])),
        )
    conn.close()


async def test_gateway_process_serves_discovery_and_the_device_flow(gateway_process, database_url):
    gw = gateway_process(env={"DATABASE_URL": database_url, "PUBLIC_URL": "https://id.example.com"})
    insert_public_client(database_url, "tv-app")
    async with httpx.AsyncClient(base_url=gw.base_url) as http:
        doc = (await http.get("/.well-known/oauth-authorization-server/oauth")).json()
        assert doc["issuer"] == "https://id.example.com/oauth"
        assert doc["token_endpoint"] == "https://id.example.com/oauth/token"
        started = (await http.post("/oauth/device/authorize", data={"client_id": "tv-app"})).json()
        assert started["interval"] == 5
        # Without a signed-in account nobody can pair.
        refused = await http.post("/oauth/device/approve", json={"user_code": started["user_code"]})
        assert refused.status_code == 401
    async with AsyncOAuth2Client(client_id="tv-app", token_endpoint_auth_method="none") as oauth:
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.fetch_token(
                gw.base_url + "/oauth/token",
                grant_type=DEVICE_GRANT,
                device_code=started["device_code"],
            )
    assert err.value.error == "authorization_pending"
