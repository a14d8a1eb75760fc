"""The mta's own settings, parsed once from ``Settings.environ``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from common.mail_settings import (
    IMAP_PORT,
    IMAPS_PORT,
    POP3_PORT,
    POP3S_PORT,
    SIEVE_PORT,
    Nameserver,
    load_shared_mail_settings,
)
from common.settings import (
    Settings,
    SettingsError,
    read_bool,
    read_float,
    read_int,
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
    # The DNS resolvers SPF, DKIM, DMARC, MX and MTA-STS ask; empty: the system's.
    dns_resolvers: tuple[Nameserver, ...] = ()
    dns_timeout: float = 5.0
    # What a DMARC p=reject failure does: "junk" (deliver to Junk) or "refuse" (550).
    dmarc_reject_action: str = "junk"
    # Whether inbound SPF/DKIM/DMARC run at all (off only for benchmarks of the storage path).
    auth_checks: bool = True
    # Days of activity the panel keeps.
    activity_days: int = 30

    # Submission (mta/submission/): mail clients send through it with AUTH.
    submission_enabled: bool = True
    # 587 with STARTTLS (RFC 6409) and 465 with implicit TLS (RFC 8314); None: off.
    submission_port: int | None = 587
    submissions_port: int | None = 465
    # The certificate of submission (and of inbound STARTTLS when SMTP_TLS_* is
    # unset): TLS_CERT_FILE/TLS_KEY_FILE, else SMTP_TLS_CERT/KEY, else a
    # self-signed one generated once under DATA_DIR/tls (mta/submission/tls.py).
    tls_cert_file: Path | None = None
    tls_key_file: Path | None = None
    # AUTH over plaintext from 127.0.0.1/::1 (development only: a local script
    # or client without TLS); everywhere else AUTH is offered only after TLS.
    submission_plaintext_loopback: bool = False
    # Failed AUTH per client address per window (then 421 and close).
    submission_auth_failures: int = 10
    submission_auth_window: int = 600
    # How long a password a mail app's door proved is taken without hashing it
    # again, while its stored hash is unchanged (mail/directory ProvenSignIns).
    auth_cache_seconds: int = 900

    # The IMAP server (mta/imap/): IMAP_PORT with STARTTLS, IMAPS_PORT with
    # implicit TLS (RFC 8314); None: off, 0: a free port (tests).
    imap_enabled: bool = True
    imap_host: str = "0.0.0.0"
    # The ports are common/mail_settings.py's (IMAP_PORT, IMAPS_PORT), which
    # mail/discovery tells clients.
    imap_port: int | None = IMAP_PORT
    imaps_port: int | None = IMAPS_PORT
    # Open connections per process and per client address (Dovecot's
    # mail_max_userip_connections is 10 per user and address; clients open a
    # few per account), beyond either: * BYE and closed.
    imap_max_connections: int = 1000
    imap_max_connections_per_ip: int = 50
    # Seconds: before login (Dovecot's 60 s), after it and while idling (RFC
    # 9051 5.4: at least 30 minutes), and for a literal's bytes to arrive.
    imap_login_timeout: int = 60
    imap_idle_timeout: int = 1800
    imap_literal_timeout: int = 300
    # The longest command line (Dovecot's imap_max_line_length: 64 KiB).
    imap_max_line: int = 65536
    # BAD answers before each waits smtp_error_sleep, and before the close.
    imap_soft_error_limit: int = 10
    imap_hard_error_limit: int = 20

    # POP3 and ManageSieve. Their ports are common/mail_settings.py's (POP3_PORT,
    # POP3S_PORT, SIEVE_PORT; None: off, 0: a free one).
    # POP3 (mta/pop3/): POP3_PORT with STLS, POP3S_PORT with implicit TLS.
    pop3_enabled: bool = True
    pop3_port: int | None = POP3_PORT
    pop3s_port: int | None = POP3S_PORT
    # Seconds a POP3 client may stay silent once signed in (RFC 1939 3: at
    # least 10 minutes), and before it has signed in.
    pop3_timeout: int = 600
    pop3_login_timeout: int = 60
    # ManageSieve (mta/managesieve/): SIEVE_PORT with STARTTLS.
    sieve_enabled: bool = True
    sieve_port: int | None = SIEVE_PORT
    sieve_timeout: int = 600
    sieve_login_timeout: int = 60
    # Open connections of each access daemon per process and per client address
    # (Dovecot: process_limit, mail_max_userip_connections 10 per user and IP).
    access_max_connections: int = 500
    access_max_connections_per_ip: int = 20
    # Errors in one session: past the soft limit each answer waits
    # access_error_sleep seconds, at the hard limit the connection is closed.
    access_soft_error_limit: int = 5
    access_hard_error_limit: int = 10
    access_error_sleep: float = 1.0

    # The outbound queue worker (mta/outbound/).
    outbound_enabled: bool = True
    # host:port of a smarthost that gets everything (a sandbox: no internet).
    outbound_relay: tuple[str, int] | None = None
    # The port MX hosts are reached on: 25; a test setting (a loopback MX).
    outbound_smtp_port: int = 25
    # Seconds before the 1st, 2nd... retry; the last repeats until the lifetime ends.
    outbound_retry_schedule: tuple[int, ...] = (60, 300, 900, 1800, 3600, 7200, 14400)
    # How long a message may wait for a recipient's server (Postfix: 5 days).
    outbound_max_lifetime: int = 5 * 24 * 3600
    # Simultaneous connections to one destination (as Postfix's
    # default_destination_concurrency_limit) and in all.
    outbound_per_destination: int = 20
    outbound_concurrency: int = 100
    # Processes that compute RSA DKIM signatures beside a worker's event loop
    # (mta/outbound/signer.py); 0 (the default, measured: docs/performance.md,
    # "Third pass: one worker's delivery") signs in the worker process itself.
    outbound_signing_processes: int = 0
    # How long a worker holds a claimed recipient before another may take it.
    outbound_lease: int = 600
    # Seconds an idle connection to a destination is kept for the next message.
    outbound_idle: float = 10.0
    # Seconds an SMTP command to a remote may take.
    outbound_timeout: float = 60.0
    # MTA-STS (RFC 8461): fetch and enforce recipients' policies.
    mta_sts: bool = True

    @property
    def tls_enabled(self) -> bool:
        return self.smtp_tls_cert is not None and self.smtp_tls_key is not None


def _relay(value: str) -> tuple[str, int] | None:
    if not value:
        return None
    host, _, port = value.strip().rpartition(":")
    if not host or not port.isdigit():
        raise SettingsError(f"OUTBOUND_RELAY must be host:port, got {value!r}")
    return host.strip("[]"), int(port)


def _schedule(value: str) -> tuple[int, ...]:
    if not value:
        return MtaSettings.outbound_retry_schedule
    try:
        steps = tuple(int(v) for v in value.split(",") if v.strip())
    except ValueError:
        raise SettingsError(
            f"OUTBOUND_RETRY_SCHEDULE must be seconds, comma separated: {value!r}"
        ) from None
    if not steps or min(steps) < 0:
        raise SettingsError("OUTBOUND_RETRY_SCHEDULE needs at least one non-negative delay")
    return steps


def load_mta_settings(settings: Settings) -> MtaSettings:
    env = settings.environ
    cert = read_str(env, "SMTP_TLS_CERT")
    key = read_str(env, "SMTP_TLS_KEY")
    if bool(cert) != bool(key):
        raise SettingsError("SMTP_TLS_CERT and SMTP_TLS_KEY go together; set both or neither")
    # DNS_*, SUBMISSION_* and the host's certificate are mail's too: read once,
    # by common/mail_settings.py. TLS_CERT_FILE/KEY name the host's certificate;
    # SMTP_TLS_CERT/KEY, older, name inbound's. Each falls back to the other,
    # so one pair serves both.
    shared = load_shared_mail_settings(settings)
    tls_cert, tls_key = shared.tls_cert_file, shared.tls_key_file
    if not cert and tls_cert:
        cert, key = tls_cert, tls_key
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
        dns_resolvers=shared.dns_resolvers,
        dns_timeout=float(shared.dns_timeout),
        dmarc_reject_action=action,
        auth_checks=read_bool(env, "SMTP_AUTH_CHECKS", True),
        activity_days=read_int(env, "MAIL_ACTIVITY_DAYS", 30, minimum=1),
        submission_enabled=read_bool(
            env, "SUBMISSION_ENABLED", read_bool(env, "SMTP_ENABLED", settings.run_workers)
        ),
        # SUBMISSION_PORT is also the port mail/ tells clients (autoconfig, the
        # _submission._tcp SRV record), and SUBMISSION_SECURITY says what it is.
        submission_port=shared.starttls_port,
        submissions_port=shared.implicit_tls_port,
        tls_cert_file=Path(tls_cert) if tls_cert else None,
        tls_key_file=Path(tls_key) if tls_key else None,
        submission_plaintext_loopback=read_bool(
            env, "SUBMISSION_PLAINTEXT_LOOPBACK", settings.is_development
        ),
        submission_auth_failures=read_int(env, "SUBMISSION_AUTH_FAILURES", 10, minimum=1),
        submission_auth_window=read_int(env, "SUBMISSION_AUTH_WINDOW", 600, minimum=1),
        auth_cache_seconds=read_int(env, "AUTH_CACHE_SECONDS", 900, minimum=0),
        imap_enabled=read_bool(
            env, "IMAP_ENABLED", read_bool(env, "SMTP_ENABLED", settings.run_workers)
        ),
        imap_host=read_str(env, "IMAP_HOST", settings.host),
        imap_port=shared.imap_port,
        imaps_port=shared.imaps_port,
        imap_max_connections=read_int(env, "IMAP_MAX_CONNECTIONS", 1000, minimum=1),
        imap_max_connections_per_ip=read_int(env, "IMAP_MAX_CONNECTIONS_PER_IP", 50, minimum=1),
        imap_login_timeout=read_int(env, "IMAP_LOGIN_TIMEOUT", 60, minimum=1),
        imap_idle_timeout=read_int(env, "IMAP_IDLE_TIMEOUT", 1800, minimum=1800),
        imap_literal_timeout=read_int(env, "IMAP_LITERAL_TIMEOUT", 300, minimum=1),
        imap_max_line=read_int(env, "IMAP_MAX_LINE", 65536, minimum=1024),
        imap_soft_error_limit=read_int(env, "IMAP_SOFT_ERROR_LIMIT", 10, minimum=0),
        imap_hard_error_limit=read_int(env, "IMAP_HARD_ERROR_LIMIT", 20, minimum=1),
        pop3_enabled=read_bool(env, "POP3_ENABLED", settings.run_workers),
        pop3_port=shared.pop3_port,
        pop3s_port=shared.pop3s_port,
        pop3_timeout=read_int(env, "POP3_TIMEOUT", 600, minimum=600),
        pop3_login_timeout=read_int(env, "POP3_LOGIN_TIMEOUT", 60, minimum=1),
        sieve_enabled=read_bool(env, "SIEVE_ENABLED", settings.run_workers),
        sieve_port=shared.sieve_port,
        sieve_timeout=read_int(env, "SIEVE_TIMEOUT", 600, minimum=60),
        sieve_login_timeout=read_int(env, "SIEVE_LOGIN_TIMEOUT", 60, minimum=1),
        access_max_connections=read_int(env, "MAIL_ACCESS_MAX_CONNECTIONS", 500, minimum=1),
        access_max_connections_per_ip=read_int(
            env, "MAIL_ACCESS_MAX_CONNECTIONS_PER_IP", 20, minimum=1
        ),
        outbound_enabled=read_bool(env, "OUTBOUND_ENABLED", settings.run_workers),
        outbound_relay=_relay(read_str(env, "OUTBOUND_RELAY")),
        outbound_smtp_port=read_int(env, "OUTBOUND_SMTP_PORT", 25, minimum=1, maximum=65535),
        outbound_retry_schedule=_schedule(read_str(env, "OUTBOUND_RETRY_SCHEDULE")),
        outbound_max_lifetime=shared.outbound_max_lifetime,
        outbound_per_destination=read_int(env, "OUTBOUND_PER_DESTINATION", 20, minimum=1),
        outbound_concurrency=read_int(env, "OUTBOUND_CONCURRENCY", 100, minimum=1),
        outbound_lease=read_int(env, "OUTBOUND_LEASE", 600, minimum=1),
        outbound_signing_processes=read_int(
            env, "OUTBOUND_SIGNING_PROCESSES", 0, minimum=0, maximum=64
        ),
        mta_sts=read_bool(env, "OUTBOUND_MTA_STS", True),
    )
