"""Thunderbird autoconfig, ``config-v1.1.xml`` (clientConfig version 1.1).

Format: https://wiki.mozilla.org/Thunderbird:Autoconfiguration:ConfigFileFormat.
The incoming servers in the order Thunderbird should prefer them (it takes
the first it can use): IMAP over implicit TLS (993, ``SSL``), IMAP with
STARTTLS (143), then POP3 likewise (995, 110); then JMAP. Submission is an
``outgoingServer type="smtp"``. Version 1.1 has no JMAP
type; the IETF autoconfig draft (draft-ietf-mailmaint-autoconfig) adds
``incomingServer type="jmap"`` with a ``url`` element, which we emit:
clients that do not know it skip the element.
"""

from __future__ import annotations

from lxml import etree

from mail.discovery.client_config import Endpoints

SOCKET_TYPES = {"starttls": "STARTTLS", "tls": "SSL"}


def _sub(parent: etree._Element, tag: str, text: str | None = None, **attrs: str) -> etree._Element:
    el = etree.SubElement(parent, tag, attrs)
    if text is not None:
        el.text = text
    return el


def render(domain: str, display_name: str, ep: Endpoints) -> bytes:
    root = etree.Element("clientConfig", version="1.1")
    provider = _sub(root, "emailProvider", id=domain)
    _sub(provider, "domain", domain)
    _sub(provider, "displayName", display_name)
    _sub(provider, "displayShortName", display_name.split(".")[0])

    for kind, servers in (("imap", ep.imap), ("pop3", ep.pop3)):
        for server in servers:
            incoming = _sub(provider, "incomingServer", type=kind)
            _sub(incoming, "hostname", server.hostname)
            _sub(incoming, "port", str(server.port))
            _sub(incoming, "socketType", SOCKET_TYPES[server.security])
            _sub(incoming, "authentication", "password-cleartext")
            _sub(incoming, "username", "%EMAILADDRESS%")

    jmap = _sub(provider, "incomingServer", type="jmap")
    _sub(jmap, "hostname", ep.jmap_hostname)
    _sub(jmap, "port", str(ep.jmap_port))
    _sub(jmap, "socketType", "SSL" if ep.jmap_session_url.startswith("https://") else "plain")
    _sub(jmap, "authentication", "password-cleartext")
    _sub(jmap, "username", "%EMAILADDRESS%")
    _sub(jmap, "url", ep.jmap_session_url)

    smtp = _sub(provider, "outgoingServer", type="smtp")
    _sub(smtp, "hostname", ep.smtp_hostname)
    _sub(smtp, "port", str(ep.smtp_port))
    _sub(smtp, "socketType", SOCKET_TYPES[ep.smtp_security])
    # Over TLS, PLAIN/LOGIN: the server keeps argon2id hashes, so no CRAM-MD5.
    _sub(smtp, "authentication", "password-cleartext")
    _sub(smtp, "username", "%EMAILADDRESS%")
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)
