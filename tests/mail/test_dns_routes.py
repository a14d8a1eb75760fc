"""DNS routes over HTTP against the loopback DNS server and the Cloudflare stand-in."""

from __future__ import annotations

import logging

import dns.rdatatype
import dns.zone

from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import CLOUDFLARE_TOKEN, add_domain, settings  # noqa: F401


def publish_correctly(dns_server, records):
    for r in records:
        if r["type"] == "TXT":
            chunks = [r["value"][i : i + 255] for i in range(0, len(r["value"]), 255)]
            dns_server.add(r["name"], "TXT", " ".join(f'"{c}"' for c in chunks))
        else:
            dns_server.add(r["name"], r["type"], r["value"])


async def test_check_reports_verified_missing_and_mismatch(client, runtime, dns_server):
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers)
    url = f"/api/domains/{domain['id']}"
    before = await (await client.get(url + "/dns", headers=headers)).json()
    assert before["object"] == "dns_record_set"
    assert before["status"] == "unchecked"
    assert {r["status"] for r in before["records"]} == {"unchecked"}
    purposes = [r["purpose"] for r in before["records"]]
    assert purposes == [
        "mx",
        "spf",
        "dkim",
        "dkim",
        "dmarc",
        "mta_sts",
        "mta_sts_host",
        "tls_rpt",
        "autoconfig",
        "autodiscover",
        "submission_srv",
        "submissions_srv",
        "imaps_srv",
        "imap_srv",
        "pop3s_srv",
        "pop3_srv",
        "sieve_srv",
        "jmap_srv",
    ]

    publish_correctly(dns_server, before["records"])
    dns_server.add("example.com", "MX", "10 mx.elsewhere.example.", replace=True)
    dns_server.remove("_dmarc.example.com", "TXT")
    resp = await client.post(url + "/check", headers=headers)
    assert resp.status == 200
    checked = await resp.json()
    by_purpose = {r["purpose"]: r for r in checked["records"]}
    assert by_purpose["mx"]["status"] == "mismatch"
    assert by_purpose["mx"]["found"] == ["10 mx.elsewhere.example."]
    assert by_purpose["dmarc"]["status"] == "missing"
    assert by_purpose["spf"]["status"] == "verified"
    assert by_purpose["jmap_srv"]["status"] == "verified"
    assert checked["status"] == "incomplete"
    assert checked["checked_at"] is not None
    assert (await (await client.get(url, headers=headers)).json())["dns_status"] == "incomplete"

    # The periodic job re-checks once the interval has passed.
    dns_server.add("example.com", "MX", "10 mx.mailhost.test.", replace=True)
    dns_server.add("_dmarc.example.com", "TXT", '"v=DMARC1; p=quarantine"')
    await runtime.jobs.schedule_recurring()
    await runtime.jobs.run_due()
    assert (await (await client.get(url, headers=headers)).json())["dns_status"] == "incomplete"
    runtime.clock.advance(seconds=3600)
    await runtime.jobs.schedule_recurring()
    await runtime.jobs.run_due()
    after = await (await client.get(url + "/dns", headers=headers)).json()
    assert after["status"] == "verified"
    assert {r["status"] for r in after["records"]} == {"verified"}


async def test_zone_export_parses_back_to_the_record_set(client, runtime):
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers)
    url = f"/api/domains/{domain['id']}"
    resp = await client.get(url + "/dns/zone", headers=headers)
    assert resp.status == 200
    assert resp.content_type == "text/dns"
    assert "example.com.zone" in resp.headers["Content-Disposition"]
    zone = dns.zone.from_text(
        await resp.text(), origin="example.com.", relativize=False, check_origin=False
    )
    parsed = set()
    for name, ttl, rdata in zone.iterate_rdatas():
        rtype = dns.rdatatype.to_text(rdata.rdtype)
        value = b"".join(rdata.strings).decode() if rtype == "TXT" else rdata.to_text()
        parsed.add((name.to_text().rstrip("."), rtype, value, ttl))
    records = (await (await client.get(url + "/dns", headers=headers)).json())["records"]
    assert parsed == {(r["name"], r["type"], r["value"], r["ttl"]) for r in records}


async def test_provider_detected_from_ns(client, runtime, dns_server):
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers, "mail.example.com")
    url = f"/api/domains/{domain['id']}/dns/provider"
    # No NS at all: unknown.
    body = await (await client.get(url, headers=headers)).json()
    assert (body["object"], body["provider"], body["nameservers"]) == (
        "dns_provider",
        "unknown",
        [],
    )
    # NS of the parent zone count for a subdomain.
    dns_server.add("example.com", "NS", "kim.ns.cloudflare.com.", "lou.ns.cloudflare.com.")
    body = await (await client.get(url, headers=headers)).json()
    assert body["provider"] == "cloudflare"
    assert body["name"] == "Cloudflare"
    assert body["publish_supported"] is True
    assert body["nameservers"] == ["kim.ns.cloudflare.com.", "lou.ns.cloudflare.com."]


async def test_publish_through_cloudflare_creates_missing_records_and_never_keeps_the_token(
    client, runtime, dns_server, cloudflare, caplog
):
    caplog.set_level(logging.DEBUG)
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers)
    url = f"/api/domains/{domain['id']}/dns/publish"
    dns_server.add("example.com", "NS", "kim.ns.cloudflare.com.")
    zone_id = cloudflare.add_zone("example.com")
    cloudflare.add_record(zone_id, type="TXT", name="example.com", content="v=spf1 mx -all")

    resp = await client.post(url, json={"api_token": CLOUDFLARE_TOKEN}, headers=headers)
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert (body["object"], body["provider"], body["zone"]) == (
        "dns_publish",
        "cloudflare",
        "example.com",
    )
    assert [r["purpose"] for r in body["already_present"]] == ["spf"]
    records = (
        await (await client.get(f"/api/domains/{domain['id']}/dns", headers=headers)).json()
    )["records"]
    assert len(body["created"]) == len(records) - 1
    published = {(b["type"], b["name"]) for b in cloudflare.created}
    assert published == {(r["type"], r["name"]) for r in records if r["purpose"] != "spf"}
    mx = next(b for b in cloudflare.created if b["type"] == "MX")
    assert (mx["content"], mx["priority"]) == ("mx.mailhost.test", 10)

    # The token was used for that call and is nowhere now: not in the database, not in logs.
    assert CLOUDFLARE_TOKEN not in caplog.text
    dump = await runtime.db.fetch_val(
        "SELECT string_agg(t::text, ' ') FROM ("
        " SELECT row_to_json(d)::text AS t FROM mail.domains d"
        " UNION ALL SELECT row_to_json(j)::text FROM common.jobs j) x"
    )
    assert CLOUDFLARE_TOKEN not in (dump or "")


async def test_publish_errors_come_back_in_the_mail_shape(client, runtime, dns_server, cloudflare):
    _, headers = await signed_in(runtime)
    domain = await add_domain(client, headers)
    url = f"/api/domains/{domain['id']}/dns/publish"

    resp = await client.post(url, json={}, headers=headers)
    assert resp.status == 422
    # NS unknown and no provider named: nothing to publish through.
    resp = await client.post(url, json={"api_token": "x"}, headers=headers)
    assert resp.status == 400
    assert "not supported" in (await resp.json())["message"]
    resp = await client.post(url, json={"api_token": "x", "provider": "route53"}, headers=headers)
    assert resp.status == 400
    resp = await client.post(url, json={"api_token": "x", "provider": "nope"}, headers=headers)
    assert resp.status == 400

    cloudflare.add_zone("example.com")
    resp = await client.post(
        url, json={"api_token": "wrong-token", "provider": "cloudflare"}, headers=headers
    )
    assert resp.status == 400
    body = await resp.json()
    assert body == {
        "statusCode": 400,
        "name": "validation_error",
        "message": "Cloudflare refused the API token: Authentication error (code 10000)",
    }
    assert cloudflare.created == []


async def test_unreachable_resolvers_read_as_error_not_missing(make_client, runtime):
    _, headers = await signed_in(runtime)
    client = await make_client(
        {"RATE_LIMIT_PER_SECOND": "1000", "DNS_RESOLVERS": "127.0.0.1:9", "DNS_TIMEOUT": "1"}
    )
    domain = await add_domain(client, headers)
    resp = await client.post(f"/api/domains/{domain['id']}/check", headers=headers)
    assert resp.status == 200
    body = await resp.json()
    assert {r["status"] for r in body["records"]} == {"error"}
    assert {r["found"] for r in body["records"]} == {None}
    assert body["status"] == "incomplete"
    provider = await (
        await client.get(f"/api/domains/{domain['id']}/dns/provider", headers=headers)
    ).json()
    assert (provider["provider"], provider["nameservers"]) == ("unknown", None)
