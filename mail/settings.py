"""The mail service's own settings, parsed once from ``Settings.environ``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from common.mail_settings import load_shared_mail_settings
from common.settings import (
    Settings,
    SettingsError,
    read_bool,
    read_int,
    read_list,
    read_str,
)


@dataclass(frozen=True)
class MailSettings:
    # Requests per second per principal (account, else client IP).
    rate_limit_per_second: int = 10
    # Requests a principal may make at once after a quiet moment (the token bucket's
    # size); the rate above refills it. Above any page load of ours (docs/mail.md).
    rate_limit_burst: int = 20
    # Sign-in and sign-up attempts per second per client IP.
    auth_rate_limit_per_second: int = 5
    # Whether accounts after the first may sign up.
    signups_enabled: bool = True
    # From: of the mail the panel sends (verification, reset, notices).
    mail_from: str = "no-reply@localhost"
    # Origins besides PUBLIC_URL allowed to make state-changing browser requests.
    trusted_origins: tuple[str, ...] = ()
    # security.txt (RFC 9116).
    security_contacts: tuple[str, ...] = ("mailto:security@localhost",)
    security_expires: datetime | None = None
    security_policy: str = ""
    # The issuer shown in authenticator apps.
    totp_issuer: str = "localhost"
    # Webhooks may target private, loopback and link-local addresses (development, tests).
    webhook_allow_private: bool = False
    # OUTBOUND_MAX_LIFETIME, read once by common/mail_settings.py: the queue's
    # retry horizon for the mail this side queues (mta/outbound/submit.py).
    outbound_max_lifetime: int = 5 * 24 * 3600


def load_mail_settings(settings: Settings) -> MailSettings:
    env = settings.environ
    host = urlsplit(settings.public_url).hostname or "localhost"
    return MailSettings(
        rate_limit_per_second=read_int(env, "RATE_LIMIT_PER_SECOND", 10, minimum=1),
        rate_limit_burst=read_int(env, "RATE_LIMIT_BURST", 20, minimum=1),
        auth_rate_limit_per_second=read_int(env, "AUTH_RATE_LIMIT_PER_SECOND", 5, minimum=1),
        signups_enabled=read_bool(env, "SIGNUPS_ENABLED", True),
        mail_from=read_str(env, "MAIL_FROM", f"no-reply@{host}"),
        trusted_origins=tuple(o.rstrip("/").lower() for o in read_list(env, "TRUSTED_ORIGINS")),
        security_contacts=tuple(_contact_uri(c) for c in read_list(env, "SECURITY_CONTACT"))
        or (f"mailto:security@{host}",),
        security_expires=_read_datetime(env, "SECURITY_TXT_EXPIRES"),
        security_policy=read_str(env, "SECURITY_POLICY_URL"),
        totp_issuer=read_str(env, "TOTP_ISSUER", host),
        webhook_allow_private=read_bool(env, "WEBHOOK_ALLOW_PRIVATE", False),
        outbound_max_lifetime=load_shared_mail_settings(settings).outbound_max_lifetime,
    )


def _read_datetime(env: Mapping[str, str], name: str) -> datetime | None:
    raw = read_str(env, name)
    if not raw:
        return None
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an ISO 8601 date-time, got {raw!r}") from None
    if value.tzinfo is None:
        raise SettingsError(f"{name} must carry a time zone (e.g. 2031-01-01T00:00:00Z)")
    return value


def _contact_uri(value: str) -> str:
    # RFC 9116 wants URIs; a bare address becomes mailto:.
    if ":" not in value and "@" in value:
        return f"mailto:{value}"
    return value
