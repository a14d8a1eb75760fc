"""Autoconfig, autodiscover and MTA-STS documents, parsed as their formats define."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from lxml import etree

from mail.discovery import autoconfig, autodiscover, mta_sts
from mail.discovery.client_config import endpoints
from mail.domains.settings import HostingSettings

HOSTING = HostingSettings(
    mail_hostname="mx.mailhost.test",
    web_hostname="panel.mailhost.test",
    web_port=443,
    web_is_https=True,
    public_url="https://panel.mailhost.test",
)
NS = {
    "r": autodiscover.RESPONSE_NS,
    "o": autodiscover.OUTLOOK_NS,
}


def test_autoconfig_is_thunderbird_clientconfig_1_1():
    root = etree.fromstring(autoconfig.render("example.com", "example.com", endpoints(HOSTING)))
    assert root.tag == "clientConfig" and root.get("version") == "1.1"
    provider = root.find("emailProvider")
    assert provider.get("id") == "example.com"
    assert provider.findtext("domain") == "example.com"
    smtp = provider.find("outgoingServer[@type='smtp']")
    assert smtp.findtext("hostname") == "mx.mailhost.test"
    assert smtp.findtext("port") == "587"
    assert smtp.findtext("socketType") == "STARTTLS"
    assert smtp.findtext("username") == "%EMAILADDRESS%"
    assert smtp.findtext("authentication") == "password-cleartext"
    jmap = provider.find("incomingServer[@type='jmap']")
    assert jmap.findtext("url") == "https://panel.mailhost.test/.well-known/jmap"
    imap = provider.find("incomingServer[@type='imap']")
    assert [imap.findtext(k) for k in ("hostname", "port", "socketType", "username")] == [
        "mx.mailhost.test",
        "993",
        "SSL",
        "%EMAILADDRESS%",
    ]


def test_autoconfig_leaves_out_a_listener_that_is_off():
    hosting = replace(HOSTING, imaps_port=None, pop3s_port=None, pop3_port=None, imap_port=1143)
    root = etree.fromstring(autoconfig.render("example.com", "example.com", endpoints(hosting)))
    incoming = [
        (s.get("type"), s.findtext("port"), s.findtext("socketType"))
        for s in root.find("emailProvider").findall("incomingServer")
    ]
    assert incoming == [("imap", "1143", "STARTTLS"), ("jmap", "443", "SSL")]


def test_autodiscover_request_and_settings_response():
    body = (
        b'<?xml version="1.0" encoding="utf-8"?>'
        b'<Autodiscover xmlns="http://schemas.microsoft.com/exchange/autodiscover/outlook/requestschema/2006">'
        b"<Request><EMailAddress>ann@example.com</EMailAddress>"
        b"<AcceptableResponseSchema>http://schemas.microsoft.com/exchange/autodiscover/outlook/responseschema/2006a</AcceptableResponseSchema>"
        b"</Request></Autodiscover>"
    )
    request = autodiscover.parse_request(body)
    assert request.email == "ann@example.com"
    root = etree.fromstring(
        autodiscover.render_settings("ann@example.com", "Ann", endpoints(HOSTING))
    )
    assert root.tag == f"{{{autodiscover.RESPONSE_NS}}}Autodiscover"
    account = root.find("o:Response/o:Account", NS)
    assert account.findtext("o:AccountType", namespaces=NS) == "email"
    assert account.findtext("o:Action", namespaces=NS) == "settings"
    imap, protocol = account.findall("o:Protocol", NS)
    assert imap.findtext("o:Type", namespaces=NS) == "IMAP"
    assert imap.findtext("o:Port", namespaces=NS) == "993"
    assert imap.findtext("o:SSL", namespaces=NS) == "on"
    assert protocol.findtext("o:Type", namespaces=NS) == "SMTP"
    assert protocol.findtext("o:Server", namespaces=NS) == "mx.mailhost.test"
    assert protocol.findtext("o:Port", namespaces=NS) == "587"
    assert protocol.findtext("o:LoginName", namespaces=NS) == "ann@example.com"
    assert protocol.findtext("o:Encryption", namespaces=NS) == "TLS"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"not xml at all", 600),
        (b"<Autodiscover><Request></Request></Autodiscover>", 600),
        (b"<Other/>", 600),
        (
            b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "y">]>'
            b"<Autodiscover><Request><EMailAddress>&x;@example.com</EMailAddress></Request></Autodiscover>",
            600,
        ),
        (
            b"<Autodiscover><Request><EMailAddress>a@example.com</EMailAddress>"
            b"<AcceptableResponseSchema>http://schemas.microsoft.com/exchange/autodiscover/mobilesync/responseschema/2006</AcceptableResponseSchema>"
            b"</Request></Autodiscover>",
            601,
        ),
    ],
)
def test_bad_autodiscover_requests_are_pox_errors(body, code):
    with pytest.raises(autodiscover.AutodiscoverError) as exc:
        autodiscover.parse_request(body)
    assert exc.value.code == code
    root = etree.fromstring(
        autodiscover.render_error(exc.value.code, exc.value.message, datetime.now(UTC))
    )
    error = root.find("r:Response/r:Error", NS)
    assert error.findtext("r:ErrorCode", namespaces=NS) == str(code)


def test_mta_sts_policy_follows_rfc_8461():
    text = mta_sts.policy_text(mode="enforce", mx_hosts=["mx.mailhost.test."], max_age=86400)
    assert all(line.endswith("\r") or line == "" for line in text.split("\n"))
    policy = mta_sts.parse_policy(text)
    assert policy == {
        "version": ["STSv1"],
        "mode": ["enforce"],
        "mx": ["mx.mailhost.test"],
        "max_age": ["86400"],
    }
    record = mta_sts.txt_record(text)
    policy_id = record.split("id=")[1]
    assert record.startswith("v=STSv1; id=") and policy_id.isalnum() and len(policy_id) <= 32
    # A changed policy announces itself with a new id.
    other = mta_sts.policy_text(mode="testing", mx_hosts=["mx.mailhost.test"], max_age=86400)
    assert mta_sts.policy_id(other) != policy_id
