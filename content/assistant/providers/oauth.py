"""OAuth for the hosted provider: PKCE consent and token refresh (AI_OAUTH_<PROVIDER>_*).

Used only when the operator registered a client (AI_OAUTH_OPENAI_CLIENT_ID);
otherwise the API-key path is the only one offered. The authorize and token
URLs default to the provider's and are overridden by the _AUTHORIZE_URL and
_TOKEN_URL variables; scopes are the comma-separated _SCOPES. Token answers
are RFC 6749 JSON (access_token, refresh_token, expires_in).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

import aiohttp

from content.assistant.providers.base import ProviderError
from content.settings import OAuthClientEnv

# Shipped defaults, per provider kind (the env variables override them).
DEFAULT_ENDPOINTS = {
    "openai": ("https://auth.openai.com/oauth/authorize", "https://auth.openai.com/oauth/token"),
}
TIMEOUT = aiohttp.ClientTimeout(total=20)


@dataclass(frozen=True)
class Client:
    client_id: str
    client_secret: str
    authorize_url: str
    token_url: str
    scopes: tuple[str, ...]


@dataclass(frozen=True)
class Tokens:
    access: str
    refresh: str
    expires_at: datetime | None


def client_for(kind: str, env: OAuthClientEnv | None) -> Client | None:
    """The registered client for ``kind``, or None: then only an API key is offered."""
    if env is None or not env.client_id:
        return None
    authorize, token = DEFAULT_ENDPOINTS.get(kind, ("", ""))
    authorize = env.authorize_url or authorize
    token = env.token_url or token
    if not authorize or not token:
        return None
    return Client(env.client_id, env.client_secret, authorize, token, env.scopes)


def pkce() -> tuple[str, str]:
    """(verifier, S256 challenge) per RFC 7636."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def authorize_url(client: Client, *, state: str, challenge: str, redirect_uri: str) -> str:
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    if client.scopes:
        query["scope"] = " ".join(client.scopes)
    sep = "&" if "?" in client.authorize_url else "?"
    return client.authorize_url + sep + urlencode(query)


async def _token_request(client: Client, form: dict[str, str], now: datetime) -> Tokens:
    form = {**form, "client_id": client.client_id}
    if client.client_secret:
        form["client_secret"] = client.client_secret
    try:
        async with (
            aiohttp.ClientSession(timeout=TIMEOUT, trust_env=False) as session,
            session.post(
                client.token_url, data=form, headers={"Accept": "application/json"}
            ) as resp,
        ):
            body: Any = await resp.json(content_type=None)
            status = resp.status
    except (aiohttp.ClientError, TimeoutError, ValueError):
        raise ProviderError("unreachable", "the provider's token endpoint did not answer") from None
    if status != 200 or not isinstance(body, dict) or not body.get("access_token"):
        reason = (
            body.get("error_description") or body.get("error") if isinstance(body, dict) else None
        )
        raise ProviderError("auth", f"the provider refused the token request: {reason or status}")
    expires_in = body.get("expires_in")
    expires_at = now + timedelta(seconds=int(expires_in)) if isinstance(expires_in, int) else None
    return Tokens(str(body["access_token"]), str(body.get("refresh_token") or ""), expires_at)


async def exchange(
    client: Client, *, code: str, verifier: str, redirect_uri: str, now: datetime
) -> Tokens:
    return await _token_request(
        client,
        {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        },
        now,
    )


async def refresh(client: Client, refresh_token: str, now: datetime) -> Tokens:
    if not refresh_token:
        raise ProviderError("auth", "the provider's access expired and gave no refresh token")
    tokens = await _token_request(
        client, {"grant_type": "refresh_token", "refresh_token": refresh_token}, now
    )
    # A provider that does not rotate refresh tokens keeps the one it gave.
    return Tokens(tokens.access, tokens.refresh or refresh_token, tokens.expires_at)
