"""The refresh_token grant (RFC 6749 6, OAuth 2.1 4.3) with rotation and reuse detection.

Each use rotates: one statement revokes the presented token and inserts its
successor (parent_token_hash), so of two concurrent refreshes exactly one
rotates; the other finds the token revoked. Presenting a revoked token burns
its whole chain, the live descendant and the chain's access tokens included
(OAuth 2.1 4.3.1, Security BCP 4.14.2).

Grace window (off by default): within ``refresh_grace_seconds`` of a
rotation, the same client presenting the rotated token again receives the
same successor pair, unsealed from the parent row, instead of a burned chain.
That covers two tabs refreshing at once and a response lost on the way back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from common.crypto import SealError, sha256_hex
from oauth import audit
from oauth.constants import GRANT_REFRESH_TOKEN
from oauth.errors import InvalidClient, InvalidGrant, InvalidRequest, InvalidScope
from oauth.rfc6749.client_auth import (
    Credentials,
    presented_secret_hash,
    throttle_address,
    verify_client,
)
from oauth.scope import format_scope, parse_scope
from oauth.server import AuthorizationServer, Call, NewTokens


@dataclass(frozen=True)
class Reused:
    user_id: int
    reason: str | None
    burned: int


class RefreshTokenGrant:
    grant_type: Final = GRANT_REFRESH_TOKEN

    async def exchange(
        self,
        server: AuthorizationServer,
        call: Call,
        creds: Credentials,
        form: Mapping[str, str],
    ) -> dict[str, Any]:
        """Authenticate the client and rotate in one round trip (the hot path)."""
        if creds.client_id is None:
            raise InvalidClient("client authentication is required")
        presented = form.get("refresh_token")
        if not presented:
            raise InvalidRequest("refresh_token is required")
        requested = parse_scope(form.get("scope")) or None
        token_hash = sha256_hex(presented)
        tokens = server.new_tokens()
        async with server.db.connection() as conn:
            client, row = await server.store.authenticate_and_rotate(
                conn,
                client_id=creds.client_id,
                address=throttle_address(call.info.ip),
                secret_hash=presented_secret_hash(creds),
                token_hash=token_hash,
                requested_scopes=requested,
                new_hash=tokens.refresh_hash,
                access_jti=tokens.jti,
                access_expires_at=tokens.access_expires_at,
                now=tokens.issued_at,
                expires_at=tokens.refresh_expires_at,
                sealed=server.seal_for_grace(tokens),
            )
        client = await verify_client(server, call, creds, client)
        client_id = client["client_id"]
        if row is None:
            # Not rotated: say why, burn a reused chain, or replay within the grace window.
            async with server.db.connection() as conn:
                old = await server.store.get_refresh_token(conn, token_hash)
                outcome = await self._refusal_or_replay(server, conn, client_id, old, requested)
            if isinstance(outcome, Reused):
                await server.audit(
                    audit.REFRESH_TOKEN_REUSED,
                    call,
                    client_id=client_id,
                    user_id=outcome.user_id,
                    details={"revoked_reason": outcome.reason, "tokens_revoked": outcome.burned},
                )
                raise InvalidGrant(
                    "refresh token was already used or revoked; its grant is revoked"
                )
            # The same pair again, re-signed with the same jti, iat and exp.
            tokens, row = outcome
        return await server.respond_with_tokens(
            call,
            tokens,
            client_id=client_id,
            user_id=row["user_id"],
            scope=row["scope"],
            chain_id=row["chain_id"],
            event=audit.TOKEN_REFRESHED,
            grant_type=self.grant_type,
        )

    async def _refusal_or_replay(
        self,
        server: AuthorizationServer,
        conn: Any,
        client_id: str,
        old: dict[str, Any] | None,
        requested: list[str] | None,
    ) -> Reused | tuple[NewTokens, dict[str, Any]]:
        """Say why the token did not rotate (raising), report a reuse after burning
        its chain, or, in the grace window, return the pair to replay."""
        now = server.now()
        if old is None:
            raise InvalidGrant("unknown refresh token")
        if old["client_id"] != client_id:
            raise InvalidGrant("refresh token was issued to another client")
        if old["revoked_at"] is not None:
            replay = await self._grace_replay(server, conn, old, requested)
            if replay is not None:
                return replay
            burned = await server.store.burn_chain(conn, old["chain_id"], now, "reuse")
            return Reused(user_id=old["user_id"], reason=old["revoked_reason"], burned=burned)
        if old["expires_at"] <= now:
            raise InvalidGrant("refresh token expired")
        if requested is not None:
            raise InvalidScope(
                "a refresh may narrow the scope, never widen it beyond " + repr(old["scope"])
            )
        raise InvalidGrant("refresh token could not be used")

    async def _grace_replay(
        self,
        server: AuthorizationServer,
        conn: Any,
        old: dict[str, Any],
        requested: list[str] | None,
    ) -> tuple[NewTokens, dict[str, Any]] | None:
        grace = server.config.refresh_grace_seconds
        sealed = old["successor_sealed"]
        if not grace or sealed is None or old["revoked_reason"] != "rotated":
            return None
        if old["revoked_at"] + timedelta(seconds=grace) < server.now():
            return None
        successor = await server.store.get_successor(conn, old["token_hash"])
        if successor is None or successor["revoked_at"] is not None:
            return None
        # The replay answers the same request only: another scope is another request.
        if requested is not None and format_scope(requested) != successor["scope"]:
            return None
        try:
            tokens = server.open_grace_seal(sealed)
        except SealError:
            return None
        if sha256_hex(tokens.refresh_token) != successor["token_hash"]:
            return None
        return tokens, successor
