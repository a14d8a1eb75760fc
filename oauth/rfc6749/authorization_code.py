"""The authorization_code grant (RFC 6749 4.1.3, OAuth 2.1 4.1.3) with PKCE (RFC 7636 4.6).

The client is authenticated and the code consumed, checked and exchanged in
one statement (one round trip). A failed check still consumes the code (the
statement commits, then the error is raised), so a code is good for one
attempt. A code presented again burns what its
first use issued (RFC 6749 4.1.2 and 10.5): its chain of refresh tokens and
their access tokens. A concurrent second use waits on the row lock and then
sees the code used, so it can never race the first one to tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from common.crypto import sha256_hex
from oauth import audit, rfc7636
from oauth.constants import GRANT_AUTHORIZATION_CODE
from oauth.errors import InvalidClient, InvalidGrant, InvalidRequest, OAuthError
from oauth.ids import random_id
from oauth.rfc6749.client_auth import (
    Credentials,
    presented_secret_hash,
    throttle_address,
    verify_client,
)
from oauth.server import AuthorizationServer, Call


class AuthorizationCodeGrant:
    grant_type: Final = GRANT_AUTHORIZATION_CODE

    async def exchange(
        self,
        server: AuthorizationServer,
        call: Call,
        creds: Credentials,
        form: Mapping[str, str],
    ) -> dict[str, Any]:
        if creds.client_id is None:
            raise InvalidClient("client authentication is required")
        code = form.get("code")
        if not code:
            raise InvalidRequest("code is required")
        verifier = form.get("code_verifier")
        if not verifier:
            raise InvalidRequest("code_verifier is required (PKCE)")
        redirect_uri = form.get("redirect_uri")
        tokens = server.new_tokens()
        now = tokens.issued_at
        chain_id = random_id(16)
        code_hash = sha256_hex(code)
        async with server.db.connection() as conn:
            client, row, issued = await server.store.authenticate_and_exchange_code(
                conn,
                client_id=creds.client_id,
                address=throttle_address(call.info.ip),
                secret_hash=presented_secret_hash(creds),
                code_hash=code_hash,
                # A malformed verifier matches no challenge.
                challenge=(
                    rfc7636.s256_challenge(verifier)
                    if rfc7636.is_valid_verifier(verifier)
                    else None
                ),
                redirect_uri=redirect_uri,
                chain_id=chain_id,
                new_hash=tokens.refresh_hash,
                access_jti=tokens.jti,
                access_expires_at=tokens.access_expires_at,
                now=now,
                expires_at=tokens.refresh_expires_at,
            )
        client = await verify_client(server, call, creds, client)
        if row is None:
            await self._unusable(server, call, code_hash)
        assert row is not None
        if not issued:
            raise _check(row, client["client_id"], redirect_uri, verifier, now) or InvalidGrant(
                "authorization code could not be exchanged"
            )
        return await server.respond_with_tokens(
            call,
            tokens,
            client_id=client["client_id"],
            user_id=row["user_id"],
            scope=row["scope"],
            chain_id=chain_id,
            event=audit.TOKEN_ISSUED,
            grant_type=self.grant_type,
        )

    async def _unusable(self, server: AuthorizationServer, call: Call, code_hash: str) -> None:
        """Raise for a code that was not consumed: unknown, or used before (then burn)."""
        async with server.db.connection() as conn:
            prior = await server.store.get_code(conn, code_hash)
            if prior is None or prior["used_at"] is None:
                raise InvalidGrant("unknown authorization code")
            if prior["chain_id"]:
                await server.store.burn_chain(conn, prior["chain_id"], server.now(), "code_reuse")
        await server.audit(
            audit.AUTHORIZATION_CODE_REUSED,
            call,
            client_id=prior["client_id"],
            user_id=prior["user_id"],
        )
        raise InvalidGrant("authorization code was already used")


def _check(
    row: Mapping[str, Any], client_id: str, redirect_uri: str | None, verifier: str, now: Any
) -> OAuthError | None:
    if row["client_id"] != client_id:
        return InvalidGrant("authorization code was issued to another client")
    if row["expires_at"] <= now:
        return InvalidGrant("authorization code expired")
    # OAuth 2.1 4.1.3: when sent, it must be the authorization request's, exactly.
    if redirect_uri is not None and redirect_uri != row["redirect_uri"]:
        return InvalidGrant("redirect_uri does not match the authorization request")
    if row["code_challenge_method"] != rfc7636.S256 or not rfc7636.verify_pkce_s256(
        verifier, row["code_challenge"]
    ):
        return InvalidGrant("code_verifier does not match the code_challenge")
    return None
