"""The OAuth server's own environment variables, parsed from the gateway's snapshot.

Only common/settings.py reads os.environ; the gateway hands us
``Settings.environ`` and we validate our variables here, once, at start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from common.settings import SettingsError, read_int, read_list, read_str
from oauth.constants import ACCESS_TOKEN_TTL_SECONDS
from oauth.scope import is_valid_scope_token

DEFAULT_SCOPES = ("openid", "profile", "email")


@dataclass(frozen=True)
class OAuthSettings:
    scopes: tuple[str, ...] = DEFAULT_SCOPES
    access_token_ttl_seconds: int = ACCESS_TOKEN_TTL_SECONDS
    refresh_grace_seconds: int = 0
    authorization_endpoint: str | None = None


def load_oauth_settings(
    env: Mapping[str, str], default_scopes: tuple[str, ...] = DEFAULT_SCOPES
) -> OAuthSettings:
    """``default_scopes`` is the host's offer when OAUTH_SCOPES is not set."""
    scopes = read_list(env, "OAUTH_SCOPES") or default_scopes
    bad = [s for s in scopes if not is_valid_scope_token(s)]
    if bad:
        raise SettingsError(f"OAUTH_SCOPES: {bad[0]!r} is not a scope token")
    return OAuthSettings(
        scopes=tuple(scopes),
        access_token_ttl_seconds=read_int(
            env,
            "OAUTH_ACCESS_TOKEN_TTL_SECONDS",
            ACCESS_TOKEN_TTL_SECONDS,
            minimum=60,
            maximum=86400,
        ),
        refresh_grace_seconds=read_int(
            env, "OAUTH_REFRESH_GRACE_SECONDS", 0, minimum=0, maximum=300
        ),
        authorization_endpoint=read_str(env, "OAUTH_AUTHORIZATION_ENDPOINT") or None,
    )
