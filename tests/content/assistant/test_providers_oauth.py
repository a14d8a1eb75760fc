"""The hosted provider over OAuth: PKCE consent, sealed tokens, refreshed before they expire."""

from __future__ import annotations

import base64
import hashlib
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.content.assistant.conftest import converse
from tests.content.assistant.standins import token_server


async def test_oauth_consent_then_token_refresh(
    make_cms: Any, team: Any, model: Any, aiohttp_server: Any, clock: Any, db: Any
) -> None:
    script, base = model
    issued: list[dict[str, Any]] = []
    auth = await aiohttp_server(token_server(issued))
    origin = str(auth.make_url("")).rstrip("/")
    cms = await make_cms(
        AI_OAUTH_OPENAI_CLIENT_ID="cms-client",
        AI_OAUTH_OPENAI_AUTHORIZE_URL=origin + "/oauth/authorize",
        AI_OAUTH_OPENAI_TOKEN_URL=origin + "/oauth/token",
        AI_OAUTH_OPENAI_SCOPES="model.request,offline_access",
    )
    admin = team["admin"].headers
    kinds = (await (await cms.get("/api/assistant/provider", headers=admin)).json())["kinds"]
    assert {k["kind"]: k["oauth"] for k in kinds}["openai"] is True
    resp = await cms.post(
        "/api/assistant/provider/oauth",
        json={"kind": "openai", "model": "gpt-test", "baseUrl": base + "/v1"},
        headers=admin,
    )
    assert resp.status == 200, await resp.text()
    url = (await resp.json())["url"]
    assert url.startswith(origin + "/oauth/authorize?")
    query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert (
        query["code_challenge_method"] == "S256"
        and query["scope"] == "model.request offline_access"
    )
    resp = await cms.get(
        "/assistant/oauth/callback",
        params={"code": "the-code", "state": query["state"]},
        allow_redirects=False,
    )
    assert resp.status == 303
    assert resp.headers["Location"] == "/admin/assistant?oauth=connected"
    verifier = issued[0]["code_verifier"]
    challenge = (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )
    assert challenge == query["code_challenge"]
    assert issued[0]["grant_type"] == "authorization_code" and issued[0]["code"] == "the-code"
    # The state is single use.
    again = await cms.get(
        "/assistant/oauth/callback",
        params={"code": "x", "state": query["state"]},
        allow_redirects=False,
    )
    assert again.status == 400
    assert (await again.json())["code"] == "AI_OAUTH_STATE_INVALID"
    row = await db.fetch_one("SELECT * FROM content.assistant_provider")
    assert row["auth"] == "oauth" and "access-1" not in str(row)

    await converse(cms, admin, "hello")
    assert script.requests[-1]["headers"]["Authorization"] == "Bearer access-1"
    clock.advance(3600 - 30)  # inside the refresh margin
    await converse(cms, admin, "hello again")
    assert (
        issued[-1]["grant_type"] == "refresh_token" and issued[-1]["refresh_token"] == "refresh-1"
    )
    assert script.requests[-1]["headers"]["Authorization"] == "Bearer access-2"
    await converse(cms, admin, "and again")
    assert len(issued) == 2  # the fresh token is kept, not refreshed each time


async def test_without_a_client_id_only_the_key_path_is_offered(cms: Any, team: Any) -> None:
    admin = team["admin"].headers
    kinds = (await (await cms.get("/api/assistant/provider", headers=admin)).json())["kinds"]
    assert not any(k["oauth"] for k in kinds)
    resp = await cms.post(
        "/api/assistant/provider/oauth", json={"kind": "openai", "model": "m"}, headers=admin
    )
    assert resp.status == 400 and (await resp.json())["code"] == "AI_OAUTH_UNAVAILABLE"
