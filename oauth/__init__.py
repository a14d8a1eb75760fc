"""The OAuth 2.1 authorization server, as a route-only library."""

from oauth.app import MIGRATIONS, OAuthConfig, create_app

__all__ = ["MIGRATIONS", "OAuthConfig", "create_app"]
