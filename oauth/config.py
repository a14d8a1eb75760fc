"""The host configuration (the spec's table, in Python names) and its defaults.

Guards are plain coroutines ``async def guard(request) -> None`` that raise to
refuse: an ``aiohttp.web.HTTPException`` (rendered in our error shape), an
:class:`oauth.errors.OAuthError`, or anything with a ``response()`` method. A
guard that admits a user records who it is where ``user_id_from_conn`` finds
it; by default ``request[oauth.config.USER_ID_KEY]`` (a typed RequestKey).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from common.clock import Clock
from oauth.constants import ACCESS_TOKEN_TTL_SECONDS

USER_ID_KEY: web.RequestKey[object] = web.RequestKey("user_id", object)

Guard = Callable[[web.Request], Awaitable[None]]
LoadUser = Callable[[Any, int], Awaitable[Any | None]]
BuildClaims = Callable[[Any], Mapping[str, Any] | Awaitable[Mapping[str, Any]]]
UserIdFromConn = Callable[[web.Request], int | str | None]
AuditHook = Callable[[Mapping[str, Any]], Awaitable[None] | None]
RequestContext = Callable[[web.Request], Mapping[str, str | None]]
BuildVerificationUri = Callable[[web.Request], str]


def default_user_id_from_conn(request: web.Request) -> int | str | None:
    return request.get(USER_ID_KEY)  # type: ignore[no-any-return]


def default_request_context(request: web.Request) -> Mapping[str, str | None]:
    # Hosts behind a proxy pass their own, which knows which proxies to believe.
    return {"ip": request.remote, "user_agent": request.headers.get("User-Agent")}


def default_verification_uri(request: web.Request) -> str:
    return f"{request.url.origin()}/pair"


@dataclass(frozen=True)
class Tables:
    """Where the records live. The migration creates the defaults in schema oauth.

    A host that created the tables under other names (same columns) points
    these at them; every statement composes the names with sql.Identifier.
    """

    schema: str = "oauth"
    clients: str = "oauth_clients"
    authorization_codes: str = "oauth_authorization_codes"
    refresh_tokens: str = "oauth_refresh_tokens"
    device_codes: str = "oauth_device_codes"
    # Not in the spec: the jti denylist that makes access tokens revocable.
    revoked_access_tokens: str = "oauth_revoked_access_tokens"
    # Not in the spec: failed client authentications per (client, address).
    client_auth_failures: str = "oauth_client_auth_failures"


@dataclass(frozen=True)
class OAuthConfig:
    db: Any
    secret: str
    scopes: Sequence[str]
    load_user: LoadUser
    build_access_token_claims: BuildClaims
    require_user: Guard
    require_admin: Guard
    user_id_from_conn: UserIdFromConn = default_user_id_from_conn
    audit: AuditHook | None = None
    request_context: RequestContext = default_request_context
    build_verification_uri: BuildVerificationUri = default_verification_uri
    tables: Tables = field(default_factory=Tables)
    base_path: str = "/oauth"
    admin_base_path: str = "/admin/oauth"
    clock: Clock = field(default_factory=Clock)
    # The issuer (RFC 8414 2, RFC 9207); None: request origin + base_path.
    issuer: str | None = None
    # The host's consent page, advertised as authorization_endpoint; None:
    # the issuer's origin followed by /authorize.
    authorization_endpoint: str | None = None
    access_token_ttl_seconds: int = ACCESS_TOKEN_TTL_SECONDS
    # aud of access tokens (RFC 9068 requires one); None: the issuer.
    audience: str | None = None
    # Seconds during which a just-rotated refresh token presented again by the
    # same client gets the same successor pair. 0 (the default) keeps the
    # spec's strict rule: any reuse burns the chain.
    refresh_grace_seconds: int = 0

    def __post_init__(self) -> None:
        if not self.secret:
            raise ValueError("OAuthConfig.secret is required (it signs access tokens)")
        for name in ("base_path", "admin_base_path"):
            value = getattr(self, name)
            if value and (not value.startswith("/") or value.endswith("/")):
                raise ValueError(f"OAuthConfig.{name} must start and not end with '/': {value!r}")
        if self.refresh_grace_seconds < 0 or self.access_token_ttl_seconds <= 0:
            raise ValueError("token lifetimes and the grace window must not be negative")
