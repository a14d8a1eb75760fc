"""What every mail handler reaches through ``request.app[MAIL]``.

Built once per process by :class:`mail.MailService` and put on each app it
creates, so handlers never touch globals and tests build their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from common.clock import Clock
from common.crypto import Sealer
from common.db import Database
from common.ratelimit import RateLimiter
from common.runtime import Runtime
from common.settings import Settings
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

    @property
    def db(self) -> Database:
        return self.runtime.db

    @property
    def clock(self) -> Clock:
        return self.runtime.clock

    @property
    def settings(self) -> Settings:
        return self.runtime.settings


MAIL = web.AppKey("mail", MailContext)


def mail_context(request: web.Request) -> MailContext:
    return request.app[MAIL]
