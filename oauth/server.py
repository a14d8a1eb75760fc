"""The authorization server: configuration, store and the token issuance every grant shares.

Grants (rfc6749/, rfc8628) call :meth:`AuthorizationServer.new_tokens` before
their database work, store the refresh token inside it, then
:meth:`AuthorizationServer.finish_tokens` after the commit: the host's
``load_user`` runs with no connection of ours held, so a small pool cannot
deadlock on requests that each hold one connection and wait for another.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from aiohttp import web

from common.crypto import Sealer, sha256_hex
from common.ratelimit import RateLimiter
from oauth import audit, rfc9068
from oauth.audit import RequestInfo
from oauth.config import OAuthConfig
from oauth.constants import REFRESH_TOKEN_TTL_SECONDS
from oauth.errors import InvalidGrant, LoginRequired
from oauth.ids import random_id
from oauth.store import Store

GRACE_SEAL_PURPOSE = "oauth-refresh-grace"


@dataclass(frozen=True)
class Call:
    """One request as the server sees it: the issuer it answers as, and who asks."""

    issuer: str
    info: RequestInfo


@dataclass(frozen=True)
class NewTokens:
    """A refresh token and an access token id, minted before the database work."""

    refresh_token: str
    jti: str
    issued_at: datetime
    access_expires_at: datetime
    refresh_expires_at: datetime

    @property
    def refresh_hash(self) -> str:
        return sha256_hex(self.refresh_token)


class AuthorizationServer:
    def __init__(self, config: OAuthConfig) -> None:
        self.config = config
        self.db = config.db
        self.clock = config.clock
        self.store = Store(config.tables)
        self.scopes = tuple(config.scopes)
        self._grace_sealer = Sealer(config.secret, GRACE_SEAL_PURPOSE)
        self.limiter = RateLimiter(config.db, config.clock)

    # --- request context ------------------------------------------------------

    def issuer(self, request: web.Request) -> str:
        if self.config.issuer:
            return self.config.issuer
        return f"{request.url.origin()}{self.config.base_path}"

    def call(self, request: web.Request) -> Call:
        context = self.config.request_context(request) or {}
        return Call(
            issuer=self.issuer(request),
            info=RequestInfo(ip=context.get("ip"), user_agent=context.get("user_agent")),
        )

    def user_id(self, request: web.Request) -> int:
        """The acting user of a guarded route (spec: userIdFromConn)."""
        raw = self.config.user_id_from_conn(request)
        if raw is None or raw == "":
            raise LoginRequired("no signed-in user")
        try:
            return int(raw)
        except (TypeError, ValueError):
            raise LoginRequired("the signed-in user has no numeric id") from None

    def now(self) -> datetime:
        return self.clock.now()

    async def audit(
        self,
        event: str,
        call: Call,
        *,
        client_id: str | None = None,
        user_id: int | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        await audit.emit(
            self.config.audit,
            event,
            self.now(),
            call.info,
            client_id=client_id,
            user_id=user_id,
            details=details,
        )

    # --- token issuance -----------------------------------------------------

    def new_tokens(self) -> NewTokens:
        now = self.now()
        return NewTokens(
            refresh_token=random_id(),
            jti=random_id(16),
            issued_at=now,
            access_expires_at=now + timedelta(seconds=self.config.access_token_ttl_seconds),
            refresh_expires_at=now + timedelta(seconds=REFRESH_TOKEN_TTL_SECONDS),
        )

    def seal_for_grace(self, tokens: NewTokens) -> str | None:
        """The successor pair, sealed, when the grace window is on (else nothing is kept)."""
        if not self.config.refresh_grace_seconds:
            return None
        return self._grace_sealer.seal(
            json.dumps(
                {
                    "refresh_token": tokens.refresh_token,
                    "jti": tokens.jti,
                    "iat": tokens.issued_at.timestamp(),
                }
            )
        )

    def open_grace_seal(self, sealed: str) -> NewTokens:
        data = json.loads(self._grace_sealer.open(sealed))
        issued_at = datetime.fromtimestamp(data["iat"], tz=self.now().tzinfo)
        return NewTokens(
            refresh_token=data["refresh_token"],
            jti=data["jti"],
            issued_at=issued_at,
            access_expires_at=issued_at + timedelta(seconds=self.config.access_token_ttl_seconds),
            refresh_expires_at=issued_at + timedelta(seconds=REFRESH_TOKEN_TTL_SECONDS),
        )

    async def store_new_chain(
        self, conn: Any, tokens: NewTokens, *, client_id: str, user_id: int, scope: str
    ) -> str:
        """Insert the first refresh token of a new grant; return its chain id."""
        chain_id = random_id(16)
        await self.store.insert_refresh_token(
            conn,
            token_hash=tokens.refresh_hash,
            client_id=client_id,
            user_id=user_id,
            scope=scope,
            chain_id=chain_id,
            access_jti=tokens.jti,
            access_expires_at=tokens.access_expires_at,
            now=tokens.issued_at,
            expires_at=tokens.refresh_expires_at,
        )
        return chain_id

    async def respond_with_tokens(
        self,
        call: Call,
        tokens: NewTokens,
        *,
        client_id: str,
        user_id: int,
        scope: str,
        chain_id: str,
        event: str,
        grant_type: str,
    ) -> dict[str, Any]:
        """finish_tokens, then the audit event saying what was issued."""
        response = await self.finish_tokens(
            call, tokens, client_id=client_id, user_id=user_id, scope=scope, chain_id=chain_id
        )
        await self.audit(
            event,
            call,
            client_id=client_id,
            user_id=user_id,
            details={"grant_type": grant_type, "scope": scope},
        )
        return response

    async def finish_tokens(
        self,
        call: Call,
        tokens: NewTokens,
        *,
        client_id: str,
        user_id: int,
        scope: str,
        chain_id: str,
    ) -> dict[str, Any]:
        """Sign the access token and shape the token response (RFC 6749 5.1)."""
        user = await self.config.load_user(self.db, user_id)
        if user is None:
            # The user is gone: nothing issued for them may stay alive.
            async with self.db.connection() as conn:
                await self.store.burn_chain(conn, chain_id, self.now(), "user_gone")
            raise InvalidGrant("the user of this grant no longer exists")
        host_claims = self.config.build_access_token_claims(user)
        if inspect.isawaitable(host_claims):
            host_claims = await host_claims
        grant = rfc9068.AccessTokenGrant(
            jti=tokens.jti,
            client_id=client_id,
            user_id=user_id,
            scope=scope,
            issued_at=int(tokens.issued_at.timestamp()),
            expires_at=int(tokens.access_expires_at.timestamp()),
        )
        claims = rfc9068.build_claims(
            grant,
            host_claims,  # type: ignore[arg-type]
            issuer=call.issuer,
            audience=self.config.audience or call.issuer,
        )
        access_token = rfc9068.sign(claims, self.config.secret)
        expires_in = max(
            0, math.ceil(tokens.access_expires_at.timestamp() - self.clock.timestamp())
        )
        return {
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": expires_in,
            "refresh_token": tokens.refresh_token,
            "scope": scope,
        }
