"""client-config, autoconfig, autodiscover and MTA-STS over HTTP."""

from __future__ import annotations

from lxml import etree

from mail.discovery import autodiscover
from mail.discovery.mta_sts import parse_policy, txt_record
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import MAIL_HOSTNAME, add_domain, settings  # noqa: F401

NS = {"r": autodiscover.RESPONSE_NS, "o": autodiscover.OUTLOOK_NS}
AUTODISCOVER_REQUEST = (
    '<?xml version="1.0" encoding="utf-8"?>'
    f'<Autodiscover xmlns="{autodiscover.REQUEST_NS}"><Request>'
    "<EMailAddress>{email}</EMailAddress>"
    f"<AcceptableResponseSchema>{autodiscover.OUTLOOK_NS}</AcceptableResponseSchema>"
    "</Request></Autodiscover>"
)


def server(port: int, security: str) -> dict[str, object]:
    return {
        "hostname": MAIL_HOSTNAME,
        "port": port,
        "security": security,
        "authentication": "password",
        "username": "full email address",
    }


async def test_client_config_needs_a_session_and_names_every_protocol(client, runtime):
    assert (await client.get("/api/client-config")).status == 401
    _, headers = await signed_in(runtime)
    body = await (await client.get("/api/client-config", headers=headers)).json()
    assert body["object"] == "client_config"
    assert body["smtp"] == {
        "hostname": MAIL_HOSTNAME,
        "port": 587,
        "security": "starttls",
        "authentication": "password",
        "username": "full email address",
    }
    # Implicit TLS first (RFC 8314), then STARTTLS; the registered ports by default.
    assert body["imap"] == [server(993, "tls"), server(143, "starttls")]
    assert body["pop3"] == [server(995, "tls"), server(110, "starttls")]
    assert body["managesieve"] == [server(4190, "starttls")]
    assert body["jmap"]["session_url"] == "http://localhost:4300/.well-known/jmap"
    assert (body["jmap"]["hostname"], body["jmap"]["port"]) == ("localhost", 4300)


async def test_autoconfig_by_emailaddress_and_by_host(client, runtime):
    _, headers = await signed_in(runtime)
    await add_domain(client, headers, "example.com")
    resp = await client.get("/mail/config-v1.1.xml?emailaddress=ann%40Example.com")
    assert resp.status == 200
    assert resp.content_type == "text/xml"
    root = etree.fromstring(await resp.read())
    assert root.tag == "clientConfig"
    provider = root.find("emailProvider")
    assert provider.findtext("domain") == "example.com"
    smtp = provider.find("outgoingServer[@type='smtp']")
    assert (smtp.findtext("hostname"), smtp.findtext("port")) == (MAIL_HOSTNAME, "587")
    incoming = [
        (s.get("type"), s.findtext("port"), s.findtext("socketType"))
        for s in provider.findall("incomingServer")
    ]
    # Thunderbird takes the first it can use: IMAP over TLS.
    assert incoming == [
        ("imap", "993", "SSL"),
        ("imap", "143", "STARTTLS"),
        ("pop3", "995", "SSL"),
        ("pop3", "110", "STARTTLS"),
        ("jmap", "4300", "plain"),
    ]
    assert (
        provider.find("incomingServer[@type='jmap']").findtext("url").endswith("/.well-known/jmap")
    )

    resp = await client.get(
        "/.well-known/autoconfig/mail/config-v1.1.xml", headers={"Host": "autoconfig.example.com"}
    )
    assert resp.status == 200
    assert etree.fromstring(await resp.read()).find("emailProvider").get("id") == "example.com"

    resp = await client.get("/mail/config-v1.1.xml?emailaddress=ann%40not-hosted.example")
    assert resp.status == 404
    assert (await resp.json())["name"] == "not_found"
    assert (await client.get("/mail/config-v1.1.xml")).status == 404


async def test_autodiscover_answers_pox_and_bad_xml_is_a_pox_error(client, runtime):
    _, headers = await signed_in(runtime)
    await add_domain(client, headers, "example.com")
    resp = await client.post(
        "/autodiscover/autodiscover.xml",
        data=AUTODISCOVER_REQUEST.format(email="Ann@Example.com"),
        headers={"Content-Type": "text/xml"},
    )
    assert resp.status == 200
    root = etree.fromstring(await resp.read())
    # Outlook is given IMAP (implicit TLS) and SMTP submission.
    protocols = root.findall("o:Response/o:Account/o:Protocol", NS)
    found = [
        (p.findtext("o:Type", namespaces=NS), p.findtext("o:Port", namespaces=NS))
        for p in protocols
    ]
    assert found == [("IMAP", "993"), ("SMTP", "587")]
    for protocol in protocols:
        assert protocol.findtext("o:Server", namespaces=NS) == MAIL_HOSTNAME
        assert protocol.findtext("o:LoginName", namespaces=NS) == "ann@example.com"
    assert protocols[0].findtext("o:SSL", namespaces=NS) == "on"

    for body in (b"<<<not xml", b"", b"<Autodiscover/>"):
        resp = await client.post("/autodiscover/autodiscover.xml", data=body)
        assert resp.status == 400
        error = etree.fromstring(await resp.read()).find("r:Response/r:Error", NS)
        assert error.findtext("r:ErrorCode", namespaces=NS) == "600"

    resp = await client.post(
        "/Autodiscover/Autodiscover.xml",
        data=AUTODISCOVER_REQUEST.format(email="ann@elsewhere.example"),
    )
    assert resp.status == 404
    error = etree.fromstring(await resp.read()).find("r:Response/r:Error", NS)
    assert error.findtext("r:ErrorCode", namespaces=NS) == "500"


async def test_mta_sts_policy_by_host_header(client, runtime):
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers, "example.com")
    resp = await client.get("/.well-known/mta-sts.txt", headers={"Host": "mta-sts.example.com"})
    assert resp.status == 200
    assert resp.content_type == "text/plain"
    text = await resp.text()
    assert text.endswith("\r\n")
    policy = parse_policy(text)
    assert policy == {
        "version": ["STSv1"],
        "mode": ["testing"],
        "mx": [MAIL_HOSTNAME],
        "max_age": ["604800"],
    }
    # mx is the record set's MX host, and the TXT id announces this very policy.
    records = (
        await (await client.get(f"/api/domains/{domain['id']}/dns", headers=headers)).json()
    )["records"]
    mx = next(r for r in records if r["purpose"] == "mx")
    assert mx["value"] == f"10 {MAIL_HOSTNAME}."
    sts = next(r for r in records if r["purpose"] == "mta_sts")
    assert sts["value"] == txt_record(text)

    for host in ("mta-sts.not-hosted.example", "example.com", "mta-sts.example.com.evil.test"):
        resp = await client.get("/.well-known/mta-sts.txt", headers={"Host": host})
        assert resp.status == 404, host


async def test_mta_sts_mode_and_max_age_come_from_settings(make_client, runtime, dns_server):
    _, headers = await signed_in(runtime)
    client = await make_client(
        {
            "RATE_LIMIT_PER_SECOND": "1000",
            "DNS_RESOLVERS": dns_server.resolver_setting,
            "MTA_STS_MODE": "enforce",
            "MTA_STS_MAX_AGE": "86400",
        }
    )
    await add_domain(client, headers, "example.com")
    resp = await client.get("/.well-known/mta-sts.txt", headers={"Host": "mta-sts.example.com:443"})
    policy = parse_policy(await resp.text())
    assert (policy["mode"], policy["max_age"]) == (["enforce"], ["86400"])
