"""The OAuth 2.1 authorization server, as a route-only library.

``create_app(OAuthConfig(...))`` returns the aiohttp app; the host supplies the
users, the consent UI and the guards. The helpers and constants below are the
spec's exports in Python names.
"""

from common.crypto import sha256_hex as sha256
from oauth.app import MIGRATIONS, create_app
from oauth.config import OAuthConfig, Tables
from oauth.constants import (
    ACCESS_TOKEN_TTL_SECONDS,
    AUTH_CODE_TTL_SECONDS,
    DEVICE_CODE_TTL_SECONDS,
    DEVICE_POLL_INTERVAL_SECONDS,
    REFRESH_TOKEN_TTL_SECONDS,
)
from oauth.ids import random_id, short_id
from oauth.redirects import is_allowed_redirect
from oauth.rfc7636 import verify_pkce_s256
from oauth.rfc8628 import new_user_code, normalize_user_code
from oauth.scope import format_scope, includes_scopes, parse_scope
from oauth.server import AuthorizationServer
from oauth.sweeps import (
    sweep_authorization_codes,
    sweep_client_auth_failures,
    sweep_device_codes,
    sweep_expired,
    sweep_refresh_tokens,
)

__all__ = [
    "ACCESS_TOKEN_TTL_SECONDS",
    "AUTH_CODE_TTL_SECONDS",
    "DEVICE_CODE_TTL_SECONDS",
    "DEVICE_POLL_INTERVAL_SECONDS",
    "MIGRATIONS",
    "REFRESH_TOKEN_TTL_SECONDS",
    "AuthorizationServer",
    "OAuthConfig",
    "Tables",
    "create_app",
    "format_scope",
    "includes_scopes",
    "is_allowed_redirect",
    "new_user_code",
    "normalize_user_code",
    "parse_scope",
    "random_id",
    "sha256",
    "short_id",
    "sweep_authorization_codes",
    "sweep_client_auth_failures",
    "sweep_device_codes",
    "sweep_expired",
    "sweep_refresh_tokens",
    "verify_pkce_s256",
]
