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


async def test_client_config_needs_a_session_and_names_smtp_and_jmap(client, runtime):
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
    protocol = root.find("o:Response/o:Account/o:Protocol", NS)
    assert protocol.findtext("o:Type", namespaces=NS) == "SMTP"
    assert protocol.findtext("o:Server", namespaces=NS) == MAIL_HOSTNAME
    assert protocol.findtext("o:LoginName", namespaces=NS) == "ann@example.com"

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
