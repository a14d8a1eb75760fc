"""The OAuth server's OpenAPI conventions: its error shape and credentials."""

from __future__ import annotations

from common.openapi import Profile, obj, string

ERROR = obj(
    {
        "error": string(pattern="^[a-z_]+$"),
        "error_description": string(),
        # Set on authorization errors the client may be sent back with (RFC 6749 4.1.2.1).
        "redirect_url": string(),
    },
    required=["error", "error_description"],
)

PROFILE = Profile(
    title="OAuth 2.1 authorization server",
    description=(
        "The OAuth server (docs/oauth.md): token, revocation, introspection and device "
        "endpoints take application/x-www-form-urlencoded bodies and client credentials "
        "(HTTP Basic or client_id/client_secret in the form); the consent routes take the "
        "host's signed-in session, the client administration the instance owner's. "
        "Errors are {error, error_description}. GET routes answer HEAD too; another "
        "method on a known path answers 405 with Allow."
    ),
    error_schema=ERROR,
    security_schemes={
        "session": {"type": "apiKey", "in": "cookie", "name": "svc_session"},
        "client": {"type": "http", "scheme": "basic"},
    },
    security={
        "user": [{"session": []}],
        "admin": [{"session": []}],
        # HTTP Basic, or client_id/client_secret in the form, or a public client's id alone.
        "client": [{"client": []}, {}],
    },
    every_route=frozenset({404, 429}),
)
