"""The mta's settings: defaults, and one clear error per bad value."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import pytest

from common.settings import Settings, SettingsError
from mail.domains.settings import load_hosting_settings
from mta.settings import load_mta_settings


def load(env: dict[str, str], **changes: object):  # type: ignore[no-untyped-def]
    return load_mta_settings(replace(Settings(), environ=MappingProxyType(env), **changes))


def test_defaults() -> None:
    config = load({}, public_url="https://mail.example.com")
    assert config.smtp_port == 2525
    assert config.smtp_hostname == "mail.example.com"
    assert config.smtp_enabled and not config.tls_enabled
    assert config.dmarc_reject_action == "junk"
    # Deadlines and limits (docs/mail.md): RFC 5321's 5 and 10 minutes, Postfix's counts.
    assert (config.smtp_timeout, config.smtp_data_timeout) == (300, 600)
    assert (config.smtp_max_connections, config.smtp_max_connections_per_ip) == (500, 50)
    assert (config.smtp_soft_error_limit, config.smtp_hard_error_limit) == (10, 20)
    assert config.smtp_error_sleep == 1.0
    assert (config.smtp_rcpt_errors_per_ip, config.smtp_rcpt_error_window) == (100, 600)
    tight = load({"SMTP_MAX_CONNECTIONS_PER_IP": "5", "SMTP_DATA_TIMEOUT": "60"})
    assert (tight.smtp_max_connections_per_ip, tight.smtp_data_timeout) == (5, 60)
    # A pure API node (no workers) runs no SMTP daemon unless told to.
    assert not load({}, run_workers=False).smtp_enabled
    assert load({"SMTP_ENABLED": "true"}, run_workers=False).smtp_enabled


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SMTP_TLS_CERT": "/etc/cert.pem"}, "SMTP_TLS_CERT and SMTP_TLS_KEY go together"),
        ({"DMARC_REJECT_ACTION": "bounce"}, "DMARC_REJECT_ACTION must be junk or refuse"),
        ({"SMTP_PORT": "70000"}, "SMTP_PORT must be at most 65535"),
        ({"SMTP_MAX_MESSAGE_SIZE": "10"}, "SMTP_MAX_MESSAGE_SIZE must be at least 1024"),
        ({"SMTP_MAX_CONNECTIONS": "0"}, "SMTP_MAX_CONNECTIONS must be at least 1"),
        ({"SMTP_ERROR_SLEEP": "soon"}, "SMTP_ERROR_SLEEP must be a number"),
        ({"TLS_CERT_FILE": "/etc/cert.pem"}, "TLS_CERT_FILE and TLS_KEY_FILE go together"),
        ({"OUTBOUND_RELAY": "smarthost"}, "OUTBOUND_RELAY must be host:port"),
        ({"OUTBOUND_RETRY_SCHEDULE": "1m,5m"}, "OUTBOUND_RETRY_SCHEDULE must be seconds"),
        ({"SUBMISSION_PORT": "70000"}, "SUBMISSION_PORT must be at most 65535"),
    ],
)
def test_bad_values(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        load(env)


def test_sending_settings() -> None:
    config = load({})
    assert (config.submission_port, config.submissions_port) == (587, 465)
    assert config.outbound_max_lifetime == 5 * 24 * 3600
    assert config.outbound_retry_schedule[0] == 60 and config.outbound_relay is None
    assert config.outbound_smtp_port == 25 and config.mta_sts
    custom = load(
        {
            "SUBMISSION_PORT": "2587",
            "SUBMISSIONS_PORT": "off",
            "OUTBOUND_RELAY": "[::1]:2525",
            "OUTBOUND_RETRY_SCHEDULE": "5, 10,20",
            "OUTBOUND_SMTP_PORT": "2526",
        }
    )
    assert (custom.submission_port, custom.submissions_port) == (2587, None)
    # Clients told "implicit TLS on SUBMISSION_PORT" find exactly that.
    tls_only = load({"SUBMISSION_SECURITY": "tls", "SUBMISSION_PORT": "4465"})
    assert (tls_only.submission_port, tls_only.submissions_port) == (None, 4465)
    assert custom.outbound_relay == ("::1", 2525)
    assert custom.outbound_retry_schedule == (5, 10, 20) and custom.outbound_smtp_port == 2526
    # One certificate pair serves submission and inbound STARTTLS.
    shared = load({"TLS_CERT_FILE": "/c.pem", "TLS_KEY_FILE": "/k.pem"})
    assert shared.tls_enabled and str(shared.smtp_tls_cert) == "/c.pem"
    assert str(shared.tls_cert_file) == "/c.pem"
    # Plaintext AUTH from the loopback: development only.
    assert load({}, app_env="development").submission_plaintext_loopback
    assert not load({}, app_env="production").submission_plaintext_loopback
    assert not load({}, run_workers=False).outbound_enabled


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SUBMISSION_SECURITY": "ssl"}, "SUBMISSION_SECURITY must be starttls or tls"),
        ({"DNS_TIMEOUT": "600"}, "DNS_TIMEOUT must be at most 60"),
        ({"DNS_TIMEOUT": "0"}, "DNS_TIMEOUT must be at least 1"),
        ({"DNS_RESOLVERS": "resolver.example"}, "is not an IP address"),
        ({"DNS_RESOLVERS": "127.0.0.1:99999"}, "is not a port"),
        ({"SUBMISSION_PORT": "-1"}, "SUBMISSION_PORT must be at least 0"),
    ],
)
def test_shared_mail_variables_refused_alike_by_mail_and_mta(
    env: dict[str, str], message: str
) -> None:
    """DNS_*, SUBMISSION_* are read once (common/mail_settings.py): a value one
    side refuses, the other refuses with the same line."""
    for loader in (load_mta_settings, load_hosting_settings):
        with pytest.raises(SettingsError, match=message):
            loader(Settings(environ=MappingProxyType(env)))


@pytest.mark.parametrize(
    ("env", "listeners", "told"),
    [
        ({}, (587, 465), (587, "starttls")),
        ({"SUBMISSION_PORT": "off"}, (None, 465), (465, "tls")),
        ({"SUBMISSION_PORT": "0"}, (0, 465), (465, "tls")),
        ({"SUBMISSION_PORT": "off", "SUBMISSIONS_PORT": "off"}, (None, None), (587, "starttls")),
        ({"SUBMISSION_PORT": "2587", "SUBMISSIONS_PORT": "none"}, (2587, None), (2587, "starttls")),
        ({"SUBMISSION_SECURITY": "tls"}, (None, 465), (465, "tls")),
        ({"SUBMISSION_SECURITY": "TLS", "SUBMISSION_PORT": "off"}, (None, None), (465, "tls")),
    ],
)
def test_submission_ports_reach_both_sides(
    env: dict[str, str], listeners: tuple[int | None, int | None], told: tuple[int, str]
) -> None:
    """What mta listens on and what mail tells clients come from one reading:
    off and 0 are accepted (docs/mail.md), and clients are told a port that is
    really listened on (a free port picked at start cannot be told)."""
    settings = Settings(environ=MappingProxyType(env))
    mta = load_mta_settings(settings)
    hosting = load_hosting_settings(settings)
    assert (mta.submission_port, mta.submissions_port) == listeners
    assert (hosting.submission_port, hosting.submission_security) == told


def test_dns_resolvers_reach_both_sides_with_their_ports() -> None:
    settings = Settings(environ=MappingProxyType({"DNS_RESOLVERS": "127.0.0.1:5353, [::1]"}))
    mta = load_mta_settings(settings)
    hosting = load_hosting_settings(settings)
    assert mta.dns_resolvers == hosting.dns_resolvers
    assert [(n.address, n.port) for n in mta.dns_resolvers] == [("127.0.0.1", 5353), ("::1", 53)]


@pytest.mark.parametrize(
    ("env", "listened", "told"),
    [
        ({}, (143, 993, 110, 995, 4190), (143, 993, 110, 995, 4190)),
        (
            {"IMAP_PORT": "off", "POP3_PORT": "none", "POP3S_PORT": "0", "SIEVE_PORT": "14190"},
            (None, 993, None, 0, 14190),
            (None, 993, None, 995, 14190),
        ),
    ],
)
def test_mailbox_access_ports_reach_both_sides(
    env: dict[str, str], listened: tuple[int | None, ...], told: tuple[int | None, ...]
) -> None:
    """IMAP_PORT, IMAPS_PORT, POP3_PORT, POP3S_PORT and SIEVE_PORT are read once:
    mta listens on them (off: not at all, 0: a free port) and discovery tells
    them (off: not offered, 0: the registered port)."""
    settings = Settings(environ=MappingProxyType(env))
    mta = load_mta_settings(settings)
    hosting = load_hosting_settings(settings)
    assert (
        mta.imap_port,
        mta.imaps_port,
        mta.pop3_port,
        mta.pop3s_port,
        mta.sieve_port,
    ) == listened
    assert (
        hosting.imap_port,
        hosting.imaps_port,
        hosting.pop3_port,
        hosting.pop3s_port,
        hosting.sieve_port,
    ) == told


def test_mailbox_access_limits() -> None:
    config = load({})
    assert (config.pop3_timeout, config.pop3_login_timeout) == (600, 60)
    assert (config.access_max_connections, config.access_max_connections_per_ip) == (500, 20)
    assert config.pop3_enabled and config.sieve_enabled
    assert not load({}, run_workers=False).pop3_enabled
    # RFC 1939 3: the autologout timer is at least 10 minutes.
    with pytest.raises(SettingsError, match="POP3_TIMEOUT must be at least 600"):
        load({"POP3_TIMEOUT": "60"})
    with pytest.raises(SettingsError, match="IMAPS_PORT must be at most 65535"):
        load({"IMAPS_PORT": "99999"})
