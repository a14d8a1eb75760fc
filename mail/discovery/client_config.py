"""Where mail clients connect: SMTP submission and JMAP, from the hosting settings.

One source for GET /api/client-config, Thunderbird's autoconfig and
Microsoft's autodiscover, so they can never disagree. There is no IMAP or
POP3 here: mailboxes are read over JMAP (RFC 8620/8621) and webmail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mail.domains.settings import HostingSettings

JMAP_SESSION_PATH = "/.well-known/jmap"


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


def endpoints(hosting: HostingSettings) -> Endpoints:
    return Endpoints(
        smtp_hostname=hosting.mail_hostname,
        smtp_port=hosting.submission_port,
        smtp_security=hosting.submission_security,
        jmap_hostname=hosting.web_hostname,
        jmap_port=hosting.web_port,
        jmap_session_url=hosting.public_url + JMAP_SESSION_PATH,
        autoconfig_url=hosting.public_url + "/mail/config-v1.1.xml",
        autodiscover_url=hosting.public_url + "/autodiscover/autodiscover.xml",
    )


def serialize(ep: Endpoints) -> dict[str, Any]:
    return {
        "object": "client_config",
        "smtp": {
            "hostname": ep.smtp_hostname,
            "port": ep.smtp_port,
            "security": ep.smtp_security,
            "authentication": "password",
            "username": "full email address",
        },
        "jmap": {
            "hostname": ep.jmap_hostname,
            "port": ep.jmap_port,
            "security": "tls" if ep.jmap_session_url.startswith("https://") else "none",
            "session_url": ep.jmap_session_url,
            "authentication": "password",
            "username": "full email address",
        },
        "autoconfig_url": ep.autoconfig_url,
        "autodiscover_url": ep.autodiscover_url,
    }
