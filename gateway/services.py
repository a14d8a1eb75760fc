"""Builds each service from the runtime, and the OAuth server's host adapter."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from aiohttp import web

import oauth
from common.runtime import Runtime, Service
from content import ContentService
from mail import MailService

OAUTH_PREFIXES = ("/oauth", "/admin/oauth", "/.well-known/oauth-authorization-server")


class OAuthService:
    """Wraps oauth.create_app(config): the gateway is the OAuth server's host."""

    name = "oauth"

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def config(self, *, at_root: bool) -> oauth.OAuthConfig:
        return oauth.OAuthConfig(
            db=self.runtime.db,
            secret=self.runtime.settings.secret,
            scopes=("openid", "profile", "email"),
            base_path="" if at_root else oauth.app.DEFAULT_BASE_PATH,
        )

    def create_app(self, *, prefix: str = "") -> web.Application:
        return oauth.create_app(self.config(at_root=prefix == ""))

    def lifespan(self) -> AbstractAsyncContextManager[None] | None:
        return None


def build_services(runtime: Runtime) -> dict[str, Service]:
    return {
        "oauth": OAuthService(runtime),
        "content": ContentService(runtime),
        "mail": MailService(runtime),
    }
