"""The mta's own settings, parsed once from ``Settings.environ``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from common.settings import (
    Settings,
    SettingsError,
    read_bool,
    read_float,
    read_int,
    read_list,
    read_str,
)

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
    # Seconds each command line may take to arrive, counted from the previous
    # command (RFC 5321 4.5.3.2.7: at least 5 minutes). Bytes trickling in do not
    # extend it; only a complete command starts the next one's clock.
    smtp_timeout: int = 300
    # Seconds the whole DATA phase may take, from the 354 to the final dot, however
    # the bytes arrive (RFC 5321 4.5.3.2.6 gives a client 10 minutes for the end).
    smtp_data_timeout: int = 600
    # Open SMTP connections per daemon process, and from one client address
    # (Postfix: default_process_limit 100, smtpd_client_connection_count_limit 50);
    # beyond either: 421 4.7.0 and the connection is closed.
    smtp_max_connections: int = 500
    smtp_max_connections_per_ip: int = 50
    # Errors (4xx/5xx replies) a client may make in one session without delivering
    # mail: past the soft limit every reply waits smtp_error_sleep seconds, at the
    # hard limit 421 4.7.0 and the connection is closed (Postfix's
    # smtpd_soft_error_limit 10, smtpd_hard_error_limit 20, smtpd_error_sleep_time 1s).
    smtp_soft_error_limit: int = 10
    smtp_hard_error_limit: int = 20
    smtp_error_sleep: float = 1.0
    # NOOP/RSET/VRFY/HELP per session before each counts as an error (Postfix's
    # smtpd_junk_command_limit 100), so idling on NOOP ends at the hard limit.
    smtp_junk_command_limit: int = 100
    # Recipients refused (unknown, not hosted, bad syntax) per client address per
    # window across all its connections and daemon processes (anvil-like, in the
    # shared rate limiter): past it, 421 4.7.0 and the connection is closed.
    smtp_rcpt_errors_per_ip: int = 100
    smtp_rcpt_error_window: int = 600
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
        smtp_data_timeout=read_int(env, "SMTP_DATA_TIMEOUT", 600, minimum=1),
        smtp_max_connections=read_int(env, "SMTP_MAX_CONNECTIONS", 500, minimum=1),
        smtp_max_connections_per_ip=read_int(env, "SMTP_MAX_CONNECTIONS_PER_IP", 50, minimum=1),
        smtp_soft_error_limit=read_int(env, "SMTP_SOFT_ERROR_LIMIT", 10, minimum=0),
        smtp_hard_error_limit=read_int(env, "SMTP_HARD_ERROR_LIMIT", 20, minimum=1),
        smtp_error_sleep=read_float(env, "SMTP_ERROR_SLEEP", 1.0),
        smtp_junk_command_limit=read_int(env, "SMTP_JUNK_COMMAND_LIMIT", 100, minimum=1),
        smtp_rcpt_errors_per_ip=read_int(env, "SMTP_RCPT_ERRORS_PER_IP", 100, minimum=1),
        smtp_rcpt_error_window=read_int(env, "SMTP_RCPT_ERROR_WINDOW", 600, minimum=1),
        smtp_reuse_port=read_bool(env, "SMTP_REUSE_PORT", False),
        dns_resolvers=read_list(env, "DNS_RESOLVERS"),
        dns_timeout=float(read_int(env, "DNS_TIMEOUT", 5, minimum=1)),
        dmarc_reject_action=action,
        auth_checks=read_bool(env, "SMTP_AUTH_CHECKS", True),
        activity_days=read_int(env, "MAIL_ACTIVITY_DAYS", 30, minimum=1),
    )
