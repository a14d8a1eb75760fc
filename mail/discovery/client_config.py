"""Where mail clients connect: IMAP, POP3, SMTP submission, ManageSieve and JMAP.

One source for GET /api/client-config, Thunderbird's autoconfig, Microsoft's
autodiscover, Apple's configuration profiles and the panel's address screen,
so they can never disagree.
Ports are the ones clients are told (mail/domains/settings.py: a listener's
own port, the registered one when it is picked at start); a listener that is
off is not offered. Mail is read over IMAP (mta/imap/), POP3 (mta/pop3/),
JMAP and webmail, sent over submission, filtered with ManageSieve
(mta/managesieve/) or the panel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mail.domains.settings import HostingSettings

JMAP_SESSION_PATH = "/.well-known/jmap"
USERNAME = "full email address"


@dataclass(frozen=True)
class Server:
    """One way in: ``security`` is "tls" (implicit TLS) or "starttls"."""

    hostname: str
    port: int
    security: str


@dataclass(frozen=True)
class Endpoints:
    smtp_hostname: str
    smtp_port: int
    # "starttls" (port 587, RFC 6409) or "tls" (implicit TLS, port 465, RFC 8314).
    smtp_security: str
    jmap_hostname: str
    jmap_port: int
    jmap_session_url: str
    autoconfig_url: str
    autodiscover_url: str
    # Each in the order a client should prefer them: implicit TLS first (RFC 8314).
    imap: tuple[Server, ...] = ()
    pop3: tuple[Server, ...] = ()
    managesieve: tuple[Server, ...] = ()


def _servers(host: str, tls_port: int | None, starttls_port: int | None) -> tuple[Server, ...]:
    found = [Server(host, tls_port, "tls")] if tls_port else []
    if starttls_port:
        found.append(Server(host, starttls_port, "starttls"))
    return tuple(found)


def endpoints(hosting: HostingSettings) -> Endpoints:
    host = hosting.mail_hostname
    return Endpoints(
        smtp_hostname=host,
        smtp_port=hosting.submission_port,
        smtp_security=hosting.submission_security,
        jmap_hostname=hosting.web_hostname,
        jmap_port=hosting.web_port,
        jmap_session_url=hosting.public_url + JMAP_SESSION_PATH,
        autoconfig_url=hosting.public_url + "/mail/config-v1.1.xml",
        autodiscover_url=hosting.public_url + "/autodiscover/autodiscover.xml",
        imap=_servers(host, hosting.imaps_port, hosting.imap_port),
        pop3=_servers(host, hosting.pop3s_port, hosting.pop3_port),
        managesieve=_servers(host, None, hosting.sieve_port),
    )


def _server(server: Server) -> dict[str, Any]:
    return {
        "hostname": server.hostname,
        "port": server.port,
        "security": server.security,
        "authentication": "password",
        "username": USERNAME,
    }


def serialize(ep: Endpoints) -> dict[str, Any]:
    return {
        "object": "client_config",
        "imap": [_server(s) for s in ep.imap],
        "pop3": [_server(s) for s in ep.pop3],
        "smtp": _server(Server(ep.smtp_hostname, ep.smtp_port, ep.smtp_security)),
        "managesieve": [_server(s) for s in ep.managesieve],
        "jmap": {
            "hostname": ep.jmap_hostname,
            "port": ep.jmap_port,
            "security": "tls" if ep.jmap_session_url.startswith("https://") else "none",
            "session_url": ep.jmap_session_url,
            "authentication": "password",
            "username": USERNAME,
        },
        "autoconfig_url": ep.autoconfig_url,
        "autodiscover_url": ep.autodiscover_url,
    }
