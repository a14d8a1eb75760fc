"""Builds each service from the runtime, and the OAuth server's host adapter."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Protocol

from aiohttp import web

import example_site
import oauth
from common.client_ip import client_ip
from common.jobs import Job
from common.migrations import MigrationSet
from common.runtime import Runtime, Service
from content import ContentService
from mail import Account, MailService, PublicAccounts
from mta.jmap.service import JmapService
from mta.service import MtaService
from oauth.config import USER_ID_KEY
from oauth.settings import DEFAULT_SCOPES, load_oauth_settings
from oauth.sweeps import SWEEP_EVERY_SECONDS, SWEEP_JOB_KIND


def all_migrations() -> list[MigrationSet]:
    """Every package's migrations, in dependency order (common first).

    Each package declares its own the same way: ``MIGRATIONS =
    MigrationSet.beside(__file__)``, exported from the package.
    """
    import common
    import content
    import mail
    import mta

    return [
        common.MIGRATIONS,
        oauth.MIGRATIONS,
        content.MIGRATIONS,
        mail.MIGRATIONS,
        mta.MIGRATIONS,
    ]


OAUTH_PREFIXES = ("/oauth", "/admin/oauth", "/.well-known/oauth-authorization-server")


class OAuthService:
    """Wraps oauth.create_app(config): the gateway is the OAuth server's host.

    The host is the mail service's account system, through its public
    adapter (mail.PublicAccounts): load_user reads a mail account by its
    integer number, require_user is the svc_session guard, require_admin
    admits the instance owner, and tokens carry sub, email and name. Without
    accounts (a host built on its own) the host is a safe default: no user
    loads and the consent and admin routes refuse every request with 401.
    """

    name = "oauth"

    def __init__(self, runtime: Runtime, accounts: PublicAccounts | None = None) -> None:
        self.runtime = runtime
        self.accounts = accounts
        # The mail host's own resource, JMAP, takes the `mail` scope (docs/mail.md):
        # offered by default so an OAuth mail client works without configuration.
        self.settings = load_oauth_settings(
            runtime.settings.environ, default_scopes=(*DEFAULT_SCOPES, "mail")
        )
        self._servers: dict[bool, oauth.AuthorizationServer] = {}
        runtime.jobs.register(SWEEP_JOB_KIND, self._sweep, every=SWEEP_EVERY_SECONDS)

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
            load_user=self.accounts.load_user if self.accounts else _no_user,
            build_access_token_claims=self.accounts.claims if self.accounts else _no_claims,
            require_user=self._require_user if self.accounts else _refuse,
            require_admin=self._require_admin if self.accounts else _refuse,
            user_id_from_conn=_signed_in_user_id,
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

    async def _signed_in(self, request: web.Request) -> Account:
        assert self.accounts is not None
        account = await self.accounts.account_for_request(request)
        if account is None:
            raise web.HTTPUnauthorized(text="sign in first")
        request[USER_ID_KEY] = account.number
        return account

    async def _require_user(self, request: web.Request) -> None:
        await self._signed_in(request)

    async def _require_admin(self, request: web.Request) -> None:
        assert self.accounts is not None
        if not self.accounts.is_instance_owner(await self._signed_in(request)):
            raise web.HTTPForbidden(text="only the instance owner administers OAuth clients")

    async def _sweep(self, job: Job) -> None:
        await oauth.sweep_expired(self.server())

    def lifespan(self) -> AbstractAsyncContextManager[None] | None:
        return None


def _signed_in_user_id(request: web.Request) -> int | None:
    # The account number the guard recorded for this request.
    return request.get(USER_ID_KEY)  # type: ignore[return-value]


async def _no_user(db: object, user_id: int) -> None:
    return None


def _no_claims(user: object) -> dict[str, object]:
    return {}


async def _refuse(request: web.Request) -> None:
    # No account system is wired in yet: nobody can consent or administer.
    raise web.HTTPUnauthorized(text="sign-in is not available on this host yet")


def build_services(runtime: Runtime) -> dict[str, Service]:
    mail = MailService(runtime)
    # In development the CMS hosts the example site (example_site/, under /site).
    content_options = example_site.OPTIONS if runtime.settings.is_development else None
    return {
        "oauth": OAuthService(runtime, mail.accounts),
        "content": ContentService(runtime, content_options),
        "mail": mail,
        "jmap": JmapService(runtime),
    }


class Daemon(Protocol):
    """A protocol daemon the gateway only starts and stops (no routes)."""

    name: str

    def lifespan(self) -> AbstractAsyncContextManager[None] | None: ...

    def listening(self) -> bool:
        """Every listener it is configured to run is accepting (readiness)."""
        ...


def build_daemons(runtime: Runtime) -> list[Daemon]:
    """Protocol daemons the all-in-one gateway runs in its process (their lifespans only)."""
    return [MtaService(runtime)]
