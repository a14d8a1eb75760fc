"""The mta's own settings, parsed once from ``Settings.environ``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from common.settings import Settings, SettingsError, read_bool, read_int, read_list, read_str

DEFAULT_MAX_MESSAGE_SIZE = 25 * 1024 * 1024


@dataclass(frozen=True)
class MtaSettings:
    # Whether the gateway runs the SMTP daemon in its own process (the all-in-one default).
    smtp_enabled: bool = True
    smtp_host: str = "0.0.0.0"
    # 2525 by default so a development run needs no privileges; 25 in production.
    smtp_port: int = 2525
    # The name this server gives in its greeting and in Received headers.
    smtp_hostname: str = "localhost"
    smtp_tls_cert: Path | None = None
    smtp_tls_key: Path | None = None
    # Advertised with SIZE and enforced while DATA is read.
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    max_recipients: int = 100
    # SO_REUSEPORT, so several daemon processes can listen on one port.
    smtp_reuse_port: bool = False
    # Seconds an idle SMTP connection is kept.
    smtp_timeout: int = 300
    # host or host:port of the DNS resolvers SPF, DKIM and DMARC ask; empty: the system's.
    dns_resolvers: tuple[str, ...] = ()
    dns_timeout: float = 5.0
    # What a DMARC p=reject failure does: "junk" (deliver to Junk) or "refuse" (550).
    dmarc_reject_action: str = "junk"
    # Whether inbound SPF/DKIM/DMARC run at all (off only for benchmarks of the storage path).
    auth_checks: bool = True
    # Days of activity the panel keeps.
    activity_days: int = 30

    @property
    def tls_enabled(self) -> bool:
        return self.smtp_tls_cert is not None and self.smtp_tls_key is not None


def load_mta_settings(settings: Settings) -> MtaSettings:
    env = settings.environ
    cert = read_str(env, "SMTP_TLS_CERT")
    key = read_str(env, "SMTP_TLS_KEY")
    if bool(cert) != bool(key):
        raise SettingsError("SMTP_TLS_CERT and SMTP_TLS_KEY go together; set both or neither")
    action = read_str(env, "DMARC_REJECT_ACTION", "junk").lower()
    if action not in ("junk", "refuse"):
        raise SettingsError(f"DMARC_REJECT_ACTION must be junk or refuse, got {action!r}")
    return MtaSettings(
        # A pure API node (RUN_WORKERS=false) runs no daemons either.
        smtp_enabled=read_bool(env, "SMTP_ENABLED", settings.run_workers),
        smtp_host=read_str(env, "SMTP_HOST", settings.host),
        smtp_port=read_int(env, "SMTP_PORT", 2525, minimum=0, maximum=65535),
        smtp_hostname=read_str(
            env, "SMTP_HOSTNAME", urlsplit(settings.public_url).hostname or "localhost"
        ),
        smtp_tls_cert=Path(cert) if cert else None,
        smtp_tls_key=Path(key) if key else None,
        max_message_size=read_int(
            env, "SMTP_MAX_MESSAGE_SIZE", DEFAULT_MAX_MESSAGE_SIZE, minimum=1024
        ),
        max_recipients=read_int(env, "SMTP_MAX_RECIPIENTS", 100, minimum=1),
        smtp_timeout=read_int(env, "SMTP_TIMEOUT", 300, minimum=1),
        smtp_reuse_port=read_bool(env, "SMTP_REUSE_PORT", False),
        dns_resolvers=read_list(env, "DNS_RESOLVERS"),
        dns_timeout=float(read_int(env, "DNS_TIMEOUT", 5, minimum=1)),
        dmarc_reject_action=action,
        auth_checks=read_bool(env, "SMTP_AUTH_CHECKS", True),
        activity_days=read_int(env, "MAIL_ACTIVITY_DAYS", 30, minimum=1),
    )
