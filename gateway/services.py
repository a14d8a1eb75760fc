"""Builds each service from the runtime, and the OAuth server's host adapter."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from aiohttp import web

import oauth
from common.client_ip import client_ip
from common.jobs import Job
from common.runtime import Runtime, Service
from content import ContentService
from mail import MailService
from oauth.settings import load_oauth_settings
from oauth.sweeps import SWEEP_EVERY_SECONDS, SWEEP_JOB_KIND

OAUTH_PREFIXES = ("/oauth", "/admin/oauth", "/.well-known/oauth-authorization-server")


class OAuthService:
    """Wraps oauth.create_app(config): the gateway is the OAuth server's host.

    Until the mail service wires its accounts in (load_user, claims, guards),
    the host is a safe default: no user loads, and the consent and admin
    routes refuse every request with 401. The token, revocation, device and
    discovery endpoints work as they do for any host.
    """

    name = "oauth"

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.settings = load_oauth_settings(runtime.settings.environ)
        self._servers: dict[bool, oauth.AuthorizationServer] = {}
        runtime.jobs.register(SWEEP_JOB_KIND, self._sweep)
        runtime.jobs.every(SWEEP_JOB_KIND, SWEEP_EVERY_SECONDS)

    def config(self, *, at_root: bool) -> oauth.OAuthConfig:
        base_path = "" if at_root else oauth.app.DEFAULT_BASE_PATH
        trusted = self.runtime.settings.trusted_proxies

        def request_context(request: web.Request) -> dict[str, str | None]:
            return {
                "ip": client_ip(request, trusted),
                "user_agent": request.headers.get("User-Agent"),
            }

        return oauth.OAuthConfig(
            db=self.runtime.db,
            secret=self.runtime.settings.secret,
            scopes=self.settings.scopes,
            load_user=_no_user,
            build_access_token_claims=_no_claims,
            require_user=_refuse,
            require_admin=_refuse,
            request_context=request_context,
            base_path=base_path,
            admin_base_path=oauth.app.DEFAULT_ADMIN_BASE_PATH,
            clock=self.runtime.clock,
            # At the root (--only oauth, host mounts) the issuer follows the request's origin.
            issuer=None if at_root else self.runtime.settings.public_url + base_path,
            authorization_endpoint=self.settings.authorization_endpoint,
            access_token_ttl_seconds=self.settings.access_token_ttl_seconds,
            refresh_grace_seconds=self.settings.refresh_grace_seconds,
        )

    def server(self, *, at_root: bool = False) -> oauth.AuthorizationServer:
        if at_root not in self._servers:
            self._servers[at_root] = oauth.AuthorizationServer(self.config(at_root=at_root))
        return self._servers[at_root]

    def create_app(self, *, prefix: str = "") -> web.Application:
        at_root = prefix == ""
        return oauth.create_app(
            self.server(at_root=at_root).config, server=self.server(at_root=at_root)
        )

    async def _sweep(self, job: Job) -> None:
        await oauth.sweep_expired(self.server())

    def lifespan(self) -> AbstractAsyncContextManager[None] | None:
        return None


async def _no_user(db: object, user_id: int) -> None:
    return None


def _no_claims(user: object) -> dict[str, object]:
    return {}


async def _refuse(request: web.Request) -> None:
    # No account system is wired in yet: nobody can consent or administer.
    raise web.HTTPUnauthorized(text="sign-in is not available on this host yet")


def build_services(runtime: Runtime) -> dict[str, Service]:
    return {
        "oauth": OAuthService(runtime),
        "content": ContentService(runtime),
        "mail": MailService(runtime),
    }
