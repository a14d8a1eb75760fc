"""The authorization_code grant (RFC 6749 4.1.3, OAuth 2.1 4.1.3) with PKCE (RFC 7636 4.6).

The code is consumed, checked and exchanged in one transaction. A failed
check still consumes it (the transaction commits, then the error is raised),
so a code is good for one attempt. A code presented again burns what its
first use issued (RFC 6749 4.1.2 and 10.5): its chain of refresh tokens and
their access tokens. A concurrent second use waits on the row lock and then
sees the code used, so it can never race the first one to tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from common.crypto import sha256_hex
from common.db import transaction
from oauth import audit, rfc7636
from oauth.constants import GRANT_AUTHORIZATION_CODE
from oauth.errors import InvalidGrant, InvalidRequest, OAuthError
from oauth.ids import random_id
from oauth.rfc6749.client_auth import Credentials, authenticate_client
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
        client = await authenticate_client(server, call, creds)
        code = form.get("code")
        if not code:
            raise InvalidRequest("code is required")
        verifier = form.get("code_verifier")
        if not verifier:
            raise InvalidRequest("code_verifier is required (PKCE)")
        redirect_uri = form.get("redirect_uri")
        client_id = client["client_id"]
        tokens = server.new_tokens()
        now = tokens.issued_at
        failure: OAuthError | None = None
        reused: dict[str, Any] | None = None
        row: dict[str, Any] | None = None
        chain_id = random_id(16)
        async with server.db.connection() as conn, transaction(conn):
            code_hash = sha256_hex(code)
            row = await server.store.consume_code(conn, code_hash, now, chain_id)
            if row is None:
                prior = await server.store.get_code(conn, code_hash)
                if prior is not None and prior["used_at"] is not None:
                    reused = prior
                    if prior["chain_id"]:
                        await server.store.burn_chain(conn, prior["chain_id"], now, "code_reuse")
                    failure = InvalidGrant("authorization code was already used")
                else:
                    failure = InvalidGrant("unknown authorization code")
            else:
                failure = _check(row, client_id, redirect_uri, verifier, now)
                if failure is None:
                    await server.store.insert_refresh_token(
                        conn,
                        token_hash=tokens.refresh_hash,
                        client_id=client_id,
                        user_id=row["user_id"],
                        scope=row["scope"],
                        chain_id=chain_id,
                        access_jti=tokens.jti,
                        access_expires_at=tokens.access_expires_at,
                        now=now,
                        expires_at=tokens.refresh_expires_at,
                    )
        if reused is not None:
            await server.audit(
                audit.AUTHORIZATION_CODE_REUSED,
                call,
                client_id=reused["client_id"],
                user_id=reused["user_id"],
            )
        if failure is not None:
            raise failure
        assert row is not None
        return await server.respond_with_tokens(
            call,
            tokens,
            client_id=client_id,
            user_id=row["user_id"],
            scope=row["scope"],
            chain_id=chain_id,
            event=audit.TOKEN_ISSUED,
            grant_type=self.grant_type,
        )


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
