"""The variables both sides of the mail host read, parsed and validated in one place.

mail/ (the DNS check, what clients are told about submission) and mta/ (the
SPF/DKIM/DMARC and MX resolver, the submission listeners) each need
DNS_RESOLVERS, DNS_TIMEOUT, SUBMISSION_SECURITY, SUBMISSION_PORT,
SUBMISSIONS_PORT and OUTBOUND_MAX_LIFETIME; and the ports of the mailbox
access daemons, which mta listens on and mail/discovery tells clients:
IMAP_PORT, IMAPS_PORT, POP3_PORT, POP3S_PORT and SIEVE_PORT; and the host's
certificate (TLS_CERT_FILE/TLS_KEY_FILE), which mta's listeners present and
mail signs Apple configuration profiles with. They used to parse them each with rules of their own (one
side took ``SUBMISSION_PORT=off``, the other refused to start on it); now
:func:`load_shared_mail_settings` is the only reader and both sides take its
values (``mail/domains/settings.py``, ``mta/settings.py``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

from common.settings import Settings, SettingsError, read_int, read_list, read_str

SUBMISSION_SECURITIES = ("starttls", "tls")
# The registered ports: submission with STARTTLS (RFC 6409), with implicit TLS (RFC 8314).
STARTTLS_PORT = 587
IMPLICIT_TLS_PORT = 465
_OFF = ("off", "none", "false")
# The registered ports of mailbox access: IMAP with STARTTLS and implicit TLS
# (RFC 9051, RFC 8314), POP3 likewise (RFC 1939 + RFC 2595, RFC 8314),
# ManageSieve (RFC 5804, STARTTLS only).
IMAP_PORT = 143
IMAPS_PORT = 993
POP3_PORT = 110
POP3S_PORT = 995
SIEVE_PORT = 4190


@dataclass(frozen=True)
class Nameserver:
    address: str
    port: int = 53


@dataclass(frozen=True)
class SharedMailSettings:
    # Recursive resolvers for every lookup of both sides; empty means the system's.
    dns_resolvers: tuple[Nameserver, ...] = ()
    # Seconds one lookup may take.
    dns_timeout: int = 5
    # What SUBMISSION_PORT speaks: "starttls" (587) or "tls" (implicit TLS, 465).
    submission_security: str = "starttls"
    # The listeners: STARTTLS and implicit TLS; None is off, 0 a free port (tests).
    # With submission_security "tls", SUBMISSION_PORT is the implicit-TLS port and
    # no STARTTLS port is opened.
    starttls_port: int | None = STARTTLS_PORT
    implicit_tls_port: int | None = IMPLICIT_TLS_PORT
    # OUTBOUND_MAX_LIFETIME: seconds the queue keeps trying a message, whichever
    # side queued it (mta/outbound/submit.py applies it to every path).
    outbound_max_lifetime: int = 5 * 24 * 3600
    # Mailbox access listeners (mta/imap/, mta/pop3/, mta/managesieve/), read
    # like SUBMISSION_PORT: a port, 0 for a free one (tests), "off" for none.
    # The ``*s_port`` ones speak TLS from the first byte, the others STARTTLS.
    imap_port: int | None = IMAP_PORT
    imaps_port: int | None = IMAPS_PORT
    pop3_port: int | None = POP3_PORT
    pop3s_port: int | None = POP3S_PORT
    sieve_port: int | None = SIEVE_PORT
    # The host's certificate (PEM, the chain after the leaf) and its key:
    # TLS_CERT_FILE/TLS_KEY_FILE, else SMTP_TLS_CERT/KEY; empty when unset
    # (mta then generates a self-signed one, and mail signs nothing).
    tls_cert_file: str = ""
    tls_key_file: str = ""

    @property
    def advertised_submission(self) -> tuple[int, str]:
        """(port, security) mail clients are told and the SRV record carries.

        The STARTTLS listener when it has a fixed port, else the implicit-TLS
        one. A listener that is off or on a port picked at start (0) cannot be
        named in advance: with none left, the registered port of
        SUBMISSION_SECURITY is told (submission is then served elsewhere under
        MAIL_HOSTNAME, a proxy or another process)."""
        if self.starttls_port:
            return self.starttls_port, "starttls"
        if self.implicit_tls_port:
            return self.implicit_tls_port, "tls"
        if self.submission_security == "tls":
            return IMPLICIT_TLS_PORT, "tls"
        return STARTTLS_PORT, "starttls"


def advertised_port(port: int | None, registered: int) -> int | None:
    """The port clients are told for a listener: its own when fixed, the
    registered one when it is picked at start (0: served elsewhere under
    MAIL_HOSTNAME, as submission's), None when the listener is off."""
    if port is None:
        return None
    return port or registered


def load_shared_mail_settings(settings: Settings) -> SharedMailSettings:
    env = settings.environ
    security = read_str(env, "SUBMISSION_SECURITY", "starttls").strip().lower()
    if security not in SUBMISSION_SECURITIES:
        raise SettingsError(f"SUBMISSION_SECURITY must be starttls or tls, got {security!r}")
    if security == "tls":
        starttls, implicit = None, port_or_off(env, "SUBMISSION_PORT", IMPLICIT_TLS_PORT)
    else:
        starttls = port_or_off(env, "SUBMISSION_PORT", STARTTLS_PORT)
        implicit = port_or_off(env, "SUBMISSIONS_PORT", IMPLICIT_TLS_PORT)
    # TLS_CERT_FILE/KEY name the host's certificate; SMTP_TLS_CERT/KEY, older,
    # name inbound's: each falls back to the other (mta/settings.py).
    tls_cert = read_str(env, "TLS_CERT_FILE") or read_str(env, "SMTP_TLS_CERT")
    tls_key = read_str(env, "TLS_KEY_FILE") or read_str(env, "SMTP_TLS_KEY")
    if bool(tls_cert) != bool(tls_key):
        raise SettingsError("TLS_CERT_FILE and TLS_KEY_FILE go together; set both or neither")
    return SharedMailSettings(
        dns_resolvers=nameservers(env, "DNS_RESOLVERS"),
        dns_timeout=read_int(env, "DNS_TIMEOUT", 5, minimum=1, maximum=60),
        submission_security=security,
        starttls_port=starttls,
        implicit_tls_port=implicit,
        outbound_max_lifetime=read_int(env, "OUTBOUND_MAX_LIFETIME", 5 * 24 * 3600, minimum=1),
        imap_port=port_or_off(env, "IMAP_PORT", IMAP_PORT),
        imaps_port=port_or_off(env, "IMAPS_PORT", IMAPS_PORT),
        pop3_port=port_or_off(env, "POP3_PORT", POP3_PORT),
        pop3s_port=port_or_off(env, "POP3S_PORT", POP3S_PORT),
        sieve_port=port_or_off(env, "SIEVE_PORT", SIEVE_PORT),
        tls_cert_file=tls_cert,
        tls_key_file=tls_key,
    )


def port_or_off(env: Mapping[str, str], name: str, default: int) -> int | None:
    """A port (0: a free one, picked at start); "off" (or "none") turns the listener off."""
    if read_str(env, name).strip().lower() in _OFF:
        return None
    return read_int(env, name, default, minimum=0, maximum=65535)


def nameservers(env: Mapping[str, str], name: str) -> tuple[Nameserver, ...]:
    """``1.1.1.1, 127.0.0.1:5353, [::1]:53``: IP addresses with an optional port."""
    servers: list[Nameserver] = []
    for item in read_list(env, name):
        host, port = item, 53
        if item.startswith("["):
            host, _, rest = item[1:].partition("]")
            if rest:
                if not rest.startswith(":"):
                    raise SettingsError(f"{name}: {item!r} is not an IP address[:port]")
                port = _port(name, rest[1:])
        elif item.count(":") == 1:
            host, _, raw_port = item.partition(":")
            port = _port(name, raw_port)
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise SettingsError(f"{name}: {item!r} is not an IP address[:port]") from None
        servers.append(Nameserver(host, port))
    return tuple(servers)


def _port(name: str, raw: str) -> int:
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise SettingsError(f"{name}: {raw!r} is not a port")
    return int(raw)
