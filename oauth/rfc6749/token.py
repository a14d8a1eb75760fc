"""The token endpoint (RFC 6749 3.2): one grant class per grant_type, picked from a table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from oauth.errors import InvalidRequest, UnsupportedGrantType
from oauth.rfc6749.authorization_code import AuthorizationCodeGrant
from oauth.rfc6749.client_auth import Credentials, read_credentials
from oauth.rfc6749.refresh_token import RefreshTokenGrant
from oauth.rfc8628 import DeviceCodeGrant
from oauth.server import AuthorizationServer, Call


class Grant(Protocol):
    @property
    def grant_type(self) -> str: ...

    async def exchange(
        self,
        server: AuthorizationServer,
        call: Call,
        creds: Credentials,
        form: Mapping[str, str],
    ) -> dict[str, Any]: ...


GRANTS: dict[str, Grant] = {
    grant.grant_type: grant
    for grant in (AuthorizationCodeGrant(), RefreshTokenGrant(), DeviceCodeGrant())
}


async def issue_token(
    server: AuthorizationServer, call: Call, authorization: str | None, form: Mapping[str, str]
) -> dict[str, Any]:
    grant_type = form.get("grant_type")
    if not grant_type:
        raise InvalidRequest("grant_type is required")
    grant = GRANTS.get(grant_type)
    if grant is None:
        raise UnsupportedGrantType(f"grant_type {grant_type} is not supported")
    # Each grant authenticates its client: the refresh grant in the same
    # statement as its rotation, so its hot path is one round trip.
    return await grant.exchange(server, call, read_credentials(authorization, form), form)
