"""Authorization server metadata, RFC 8414, served at both well-known forms.

RFC 8414 3: for an issuer with a path (``https://host/oauth``) the document
lives at ``/.well-known/oauth-authorization-server/oauth``; clients that only
know the host try ``/.well-known/oauth-authorization-server``; both answer.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlsplit

from oauth.constants import GRANT_AUTHORIZATION_CODE, GRANT_DEVICE_CODE, GRANT_REFRESH_TOKEN
from oauth.rfc6749.client_auth import AUTH_METHODS, CLIENT_SECRET_BASIC, CLIENT_SECRET_POST
from oauth.rfc7636 import S256
from oauth.server import AuthorizationServer

WELL_KNOWN: Final = "/.well-known/oauth-authorization-server"


def well_known_paths(issuer_path: str) -> list[str]:
    paths = [WELL_KNOWN]
    if issuer_path and issuer_path != "/":
        paths.append(WELL_KNOWN + issuer_path.rstrip("/"))
    return paths


def metadata(server: AuthorizationServer, issuer: str) -> dict[str, Any]:
    parts = urlsplit(issuer)
    authorization_endpoint = (
        server.config.authorization_endpoint or f"{parts.scheme}://{parts.netloc}/authorize"
    )
    return {
        "issuer": issuer,
        "authorization_endpoint": authorization_endpoint,
        "token_endpoint": f"{issuer}/token",
        "revocation_endpoint": f"{issuer}/revoke",
        "introspection_endpoint": f"{issuer}/introspect",
        "device_authorization_endpoint": f"{issuer}/device/authorize",
        "grant_types_supported": [GRANT_AUTHORIZATION_CODE, GRANT_REFRESH_TOKEN, GRANT_DEVICE_CODE],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "code_challenge_methods_supported": [S256],
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "revocation_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "introspection_endpoint_auth_methods_supported": [CLIENT_SECRET_BASIC, CLIENT_SECRET_POST],
        "scopes_supported": list(server.scopes),
        "authorization_response_iss_parameter_supported": True,
    }
