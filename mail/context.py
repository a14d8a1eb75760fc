"""What every mail handler and service reaches through ``request.app[MAIL]``.

Built once per process by :class:`mail.MailService` and put on each app it
creates, so handlers never touch globals and tests build their own. One
context for the whole package: accounts and sessions use the sealers and the
limiter, domains, DNS, DKIM and discovery use the hosting settings, the DKIM
sealer and the resolver.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aiohttp import web

from common.clock import Clock
from common.crypto import Sealer
from common.db import Database
from common.outbound import OutboundClient
from common.ratelimit import RateLimiter
from common.runtime import Runtime
from common.settings import Settings
from mail.billing.settings import BillingSettings
from mail.dns.lookup import Resolver
from mail.dns.providers.base import Publisher
from mail.dns.providers.cloudflare import CloudflarePublisher
from mail.domains.settings import HostingSettings
from mail.settings import MailSettings


@dataclass(frozen=True)
class MailContext:
    runtime: Runtime
    config: MailSettings
    limiter: RateLimiter
    # Seals TOTP secrets at rest.
    totp_sealer: Sealer
    # Seals queued mail at rest: it carries one-time reset and verification links.
    outbox_sealer: Sealer
    # The mail server's names, DNS checking, MTA-STS and providers (mail/domains/settings.py).
    hosting: HostingSettings
    # Seals DKIM private keys at rest (purpose mail.dkim).
    dkim_sealer: Sealer
    resolver: Resolver
    # Seals webhook signing secrets at rest (purpose mail.webhook): deliveries sign with them.
    webhook_sealer: Sealer
    # Every call that leaves the process (webhook deliveries): the SSRF-safe client.
    outbound: OutboundClient
    # Plans file and payment provider (mail/billing/settings.py).
    billing: BillingSettings = field(default_factory=BillingSettings)

    @property
    def db(self) -> Database:
        return self.runtime.db

    @property
    def clock(self) -> Clock:
        return self.runtime.clock

    @property
    def settings(self) -> Settings:
        return self.runtime.settings

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


MAIL = web.AppKey("mail", MailContext)


def mail_context(request: web.Request) -> MailContext:
    return request.app[MAIL]
