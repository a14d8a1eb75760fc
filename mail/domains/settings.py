"""Settings of mail hosting: the mail server's names, DNS checking, MTA-STS, providers.

Parsed once from ``Settings.environ`` with the shared typed readers; every
variable is documented in docs/mail.md ("Domains, DNS and DKIM").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from common.mail_settings import (
    IMAP_PORT,
    IMAPS_PORT,
    IMPLICIT_TLS_PORT,
    POP3_PORT,
    POP3S_PORT,
    SIEVE_PORT,
    Nameserver,
    advertised_port,
    load_shared_mail_settings,
)
from common.settings import Settings, SettingsError, read_int, read_str, read_url

MTA_STS_MODES = ("enforce", "testing", "none")
# RFC 8461 3.2: max_age is at most 31557600 seconds (about a year).
MTA_STS_MAX_AGE_LIMIT = 31_557_600


@dataclass(frozen=True)
class HostingSettings:
    # The mail server's host name: the MX target and the SMTP submission host.
    mail_hostname: str = "localhost"
    # The host name of this HTTP service (PUBLIC_URL): JMAP, MTA-STS, autoconfig.
    web_hostname: str = "localhost"
    # The port mail clients reach HTTPS on (the JMAP SRV record, client-config).
    web_port: int = 443
    web_is_https: bool = False
    public_url: str = "http://localhost"
    # What mail clients are told about SMTP submission (RFC 6409 / RFC 8314):
    # SharedMailSettings.advertised_submission.
    submission_port: int = 587
    submission_security: str = "starttls"
    # The implicit-TLS submission port told beside a STARTTLS one (RFC 8314's
    # _submissions._tcp); None when SUBMISSION_PORT is that port or it is off.
    submissions_port: int | None = IMPLICIT_TLS_PORT
    # Mailbox access told to clients (autoconfig, autodiscover, client-config,
    # the RFC 6186 SRV records): each listener's port (common/mail_settings.py
    # advertised_port: the registered one when picked at start), None when off.
    imaps_port: int | None = IMAPS_PORT
    imap_port: int | None = IMAP_PORT
    pop3s_port: int | None = POP3S_PORT
    pop3_port: int | None = POP3_PORT
    sieve_port: int | None = SIEVE_PORT
    # The host's certificate and key (TLS_CERT_FILE/TLS_KEY_FILE, read by
    # common/mail_settings.py): Apple configuration profiles are signed with
    # them; empty, they go out unsigned (mail/discovery/apple_profile.py).
    tls_cert_file: str = ""
    tls_key_file: str = ""
    # Recursive resolvers for the DNS check; empty means the system's.
    dns_resolvers: tuple[Nameserver, ...] = ()
    dns_timeout_seconds: int = 5
    # How often the background job re-checks every domain's records.
    dns_check_interval_seconds: int = 3600
    mta_sts_mode: str = "testing"
    mta_sts_max_age: int = 604_800
    dns_ttl: int = 3600
    cloudflare_api_url: str = "https://api.cloudflare.com/client/v4"
    provider_timeout_seconds: int = 15


def load_hosting_settings(settings: Settings) -> HostingSettings:
    env = settings.environ
    public = urlsplit(settings.public_url)
    web_hostname = (public.hostname or "localhost").lower()
    is_https = public.scheme == "https"
    web_port = public.port or (443 if is_https else 80)
    mail_hostname = _hostname(env, "MAIL_HOSTNAME", web_hostname)
    # DNS_* and SUBMISSION_* are mta's too: read once, by common/mail_settings.py.
    shared = load_shared_mail_settings(settings)
    submission_port, submission_security = shared.advertised_submission
    mode = read_str(env, "MTA_STS_MODE", "testing").lower()
    if mode not in MTA_STS_MODES:
        raise SettingsError(f"MTA_STS_MODE must be one of {', '.join(MTA_STS_MODES)}")
    return HostingSettings(
        mail_hostname=mail_hostname,
        web_hostname=web_hostname,
        web_port=web_port,
        web_is_https=is_https,
        public_url=settings.public_url.rstrip("/"),
        submission_port=submission_port,
        submission_security=submission_security,
        submissions_port=(
            advertised_port(shared.implicit_tls_port, IMPLICIT_TLS_PORT)
            if submission_security == "starttls"
            else None
        ),
        imaps_port=advertised_port(shared.imaps_port, IMAPS_PORT),
        imap_port=advertised_port(shared.imap_port, IMAP_PORT),
        pop3s_port=advertised_port(shared.pop3s_port, POP3S_PORT),
        pop3_port=advertised_port(shared.pop3_port, POP3_PORT),
        sieve_port=advertised_port(shared.sieve_port, SIEVE_PORT),
        tls_cert_file=shared.tls_cert_file,
        tls_key_file=shared.tls_key_file,
        dns_resolvers=shared.dns_resolvers,
        dns_timeout_seconds=shared.dns_timeout,
        dns_check_interval_seconds=read_int(env, "DNS_CHECK_INTERVAL", 3600, minimum=60),
        mta_sts_mode=mode,
        mta_sts_max_age=read_int(
            env, "MTA_STS_MAX_AGE", 604_800, minimum=0, maximum=MTA_STS_MAX_AGE_LIMIT
        ),
        dns_ttl=read_int(env, "DNS_RECORD_TTL", 3600, minimum=60, maximum=86400),
        cloudflare_api_url=read_url(
            env, "CLOUDFLARE_API_URL", "https://api.cloudflare.com/client/v4"
        ),
        provider_timeout_seconds=read_int(env, "DNS_PROVIDER_TIMEOUT", 15, minimum=1, maximum=120),
    )


def _hostname(env: Mapping[str, str], name: str, default: str) -> str:
    value = read_str(env, name, default).strip().rstrip(".").lower()
    labels = value.split(".")
    if not value or any(not label or len(label) > 63 for label in labels):
        raise SettingsError(f"{name} must be a host name, got {value!r}")
    return value
