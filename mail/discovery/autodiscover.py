"""Microsoft Autodiscover, plain-old-XML (POX) flavour, as Outlook posts it.

Request (``.../outlook/requestschema/2006``)::

    <Autodiscover><Request><EMailAddress>user@example.com</EMailAddress>
      <AcceptableResponseSchema>.../outlook/responseschema/2006a</AcceptableResponseSchema>
    </Request></Autodiscover>

The answer lists an ``IMAP`` ``Protocol`` (implicit TLS when it is on, else
STARTTLS; POX names one server per type, and Outlook speaks no JMAP and
prefers IMAP to POP3, so POP3 is not listed) and an ``SMTP`` one. Errors use the POX ``Error`` element: 600 for an invalid
request (bad XML, no address), 601 for a response schema we cannot provide,
500 for an address whose domain is not hosted here.

Parsing never resolves entities, loads DTDs or touches the network, so a
hostile body (billion laughs, XXE) is just an invalid request.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from lxml import etree

from mail.discovery.client_config import Endpoints, Server

REQUEST_NS = "http://schemas.microsoft.com/exchange/autodiscover/outlook/requestschema/2006"
RESPONSE_NS = "http://schemas.microsoft.com/exchange/autodiscover/responseschema/2006"
OUTLOOK_NS = "http://schemas.microsoft.com/exchange/autodiscover/outlook/responseschema/2006a"
MAX_BODY_BYTES = 64 * 1024

INVALID_REQUEST = 600
SCHEMA_NOT_AVAILABLE = 601
ADDRESS_NOT_FOUND = 500


class AutodiscoverError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class AutodiscoverRequest:
    email: str
    schema: str


_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, dtd_validation=False
)


def _child_text(parent: etree._Element, name: str) -> str | None:
    # Match by local name: clients differ on namespaces (and some send none).
    for el in parent:
        if isinstance(el.tag, str) and etree.QName(el).localname == name:
            return (el.text or "").strip()
    return None


def parse_request(body: bytes) -> AutodiscoverRequest:
    if len(body) > MAX_BODY_BYTES:
        raise AutodiscoverError(INVALID_REQUEST, "Invalid Request")
    try:
        root = etree.fromstring(body, _PARSER)
    except (etree.XMLSyntaxError, ValueError):
        raise AutodiscoverError(INVALID_REQUEST, "Invalid Request") from None
    if root.getroottree().docinfo.doctype:
        raise AutodiscoverError(INVALID_REQUEST, "Invalid Request")
    if etree.QName(root).localname != "Autodiscover":
        raise AutodiscoverError(INVALID_REQUEST, "Invalid Request")
    request = next(
        (el for el in root if isinstance(el.tag, str) and etree.QName(el).localname == "Request"),
        None,
    )
    if request is None:
        raise AutodiscoverError(INVALID_REQUEST, "Invalid Request")
    email = _child_text(request, "EMailAddress")
    if not email or "@" not in email:
        raise AutodiscoverError(INVALID_REQUEST, "Invalid Request: EMailAddress is required")
    schema = _child_text(request, "AcceptableResponseSchema") or OUTLOOK_NS
    if schema != OUTLOOK_NS:
        raise AutodiscoverError(SCHEMA_NOT_AVAILABLE, "Provider is not available")
    return AutodiscoverRequest(email=email, schema=schema)


def _sub(parent: etree._Element, tag: str, text: str | None = None) -> etree._Element:
    el = etree.SubElement(parent, tag)
    if text is not None:
        el.text = text
    return el


def render_settings(email: str, display_name: str, ep: Endpoints) -> bytes:
    root = etree.Element(f"{{{RESPONSE_NS}}}Autodiscover", nsmap={None: RESPONSE_NS})
    response = etree.SubElement(root, f"{{{OUTLOOK_NS}}}Response", nsmap={None: OUTLOOK_NS})
    o = f"{{{OUTLOOK_NS}}}"
    user = _sub(response, o + "User")
    _sub(user, o + "DisplayName", display_name)
    _sub(user, o + "AutoDiscoverSMTPAddress", email)
    account = _sub(response, o + "Account")
    _sub(account, o + "AccountType", "email")
    _sub(account, o + "Action", "settings")
    if ep.imap:
        _protocol(account, "IMAP", ep.imap[0], email)
    smtp = _protocol(
        account, "SMTP", Server(ep.smtp_hostname, ep.smtp_port, ep.smtp_security), email
    )
    _sub(smtp, o + "UsePOPAuth", "off")
    _sub(smtp, o + "SMTPLast", "off")
    return etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True)


def _protocol(account: etree._Element, kind: str, server: Server, email: str) -> etree._Element:
    o = f"{{{OUTLOOK_NS}}}"
    protocol = _sub(account, o + "Protocol")
    _sub(protocol, o + "Type", kind)
    _sub(protocol, o + "Server", server.hostname)
    _sub(protocol, o + "Port", str(server.port))
    _sub(protocol, o + "DomainRequired", "off")
    _sub(protocol, o + "LoginName", email)
    _sub(protocol, o + "SPA", "off")
    if server.security == "tls":
        _sub(protocol, o + "SSL", "on")
    else:
        _sub(protocol, o + "Encryption", "TLS")
    _sub(protocol, o + "AuthRequired", "on")
    return protocol


def render_error(code: int, message: str, now: datetime) -> bytes:
    root = etree.Element(f"{{{RESPONSE_NS}}}Autodiscover", nsmap={None: RESPONSE_NS})
    response = _sub(root, f"{{{RESPONSE_NS}}}Response")
    error = etree.SubElement(
        response,
        f"{{{RESPONSE_NS}}}Error",
        Time=now.strftime("%H:%M:%S.%f")[:-3],
        Id="0",
    )
    _sub(error, f"{{{RESPONSE_NS}}}ErrorCode", str(code))
    _sub(error, f"{{{RESPONSE_NS}}}Message", message)
    _sub(error, f"{{{RESPONSE_NS}}}DebugData")
    return etree.tostring(root, xml_declaration=True, encoding="utf-8", pretty_print=True)
