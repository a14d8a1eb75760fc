"""What the domain, DNS and discovery handlers reach through ``request.app[HOSTING]``.

Built once per process by :class:`mail.service.MailService` next to the
panel's own MailContext.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from common.crypto import Sealer
from common.settings import Settings
from mail.dkim.keys import dkim_sealer
from mail.dns.lookup import Resolver
from mail.dns.providers.base import Publisher
from mail.dns.providers.cloudflare import CloudflarePublisher
from mail.domains.settings import HostingSettings, load_hosting_settings


@dataclass(frozen=True)
class HostingContext:
    hosting: HostingSettings
    # Seals DKIM private keys at rest (purpose mail.dkim).
    dkim_sealer: Sealer
    resolver: Resolver

    def publisher(self, provider_id: str) -> Publisher | None:
        """The API client for a provider, or None when publishing there is not supported."""
        if provider_id == "cloudflare":
            return CloudflarePublisher(
                self.hosting.cloudflare_api_url, timeout=self.hosting.provider_timeout_seconds
            )
        return None

    @property
    def publish_providers(self) -> tuple[str, ...]:
        return ("cloudflare",)


def build_hosting_context(settings: Settings) -> HostingContext:
    hosting = load_hosting_settings(settings)
    return HostingContext(
        hosting=hosting,
        dkim_sealer=dkim_sealer(settings.secret),
        resolver=Resolver(hosting.dns_resolvers, timeout=hosting.dns_timeout_seconds),
    )


HOSTING = web.AppKey("mail.hosting", HostingContext)


def hosting_context(request: web.Request) -> HostingContext:
    return request.app[HOSTING]
