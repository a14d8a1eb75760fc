"""The Cloudflare publisher against a local stand-in of Cloudflare's v4 API."""

from __future__ import annotations

import logging

import pytest

from mail.dns.providers.base import ProviderError
from mail.dns.providers.cloudflare import CloudflarePublisher, unquote_txt
from mail.dns.records import record_set
from mail.domains.settings import HostingSettings
from tests.mail.hosting_fixtures import CLOUDFLARE_TOKEN

HOSTING = HostingSettings(mail_hostname="mx.mailhost.test", web_hostname="panel.mailhost.test")


async def test_publishes_only_missing_records_and_leaves_conflicts(cloudflare, caplog):
    caplog.set_level(logging.DEBUG)
    zone = cloudflare.add_zone("example.com")
    # Already right: SPF (quoted, as Cloudflare shows TXT). Wrong: the MX.
    cloudflare.add_record(zone, type="TXT", name="example.com", content='"v=spf1 mx -all"')
    cloudflare.add_record(
        zone, type="MX", name="example.com", content="other.example.net", priority=5
    )
    records = record_set("example.com", HOSTING, [])
    publisher = CloudflarePublisher(cloudflare.base_url)
    result = await publisher.publish("example.com", records, CLOUDFLARE_TOKEN)

    assert result.zone == "example.com"
    assert [r.purpose for r in result.already_present] == ["spf"]
    assert [r.purpose for r in result.conflicting] == ["mx"]
    created = {(b["type"], b["name"]): b for b in cloudflare.created}
    assert len(created) == len(records) - 2
    assert created[("TXT", "_dmarc.example.com")]["content"] == "v=DMARC1; p=quarantine"
    assert created[("CNAME", "mta-sts.example.com")] == {
        "type": "CNAME",
        "name": "mta-sts.example.com",
        "content": "panel.mailhost.test",
        "proxied": False,
        "ttl": 3600,
    }
    assert created[("SRV", "_submission._tcp.example.com")]["data"] == {
        "priority": 0,
        "weight": 1,
        "port": 587,
        "target": "mx.mailhost.test",
    }
    assert set(cloudflare.authorizations) == {f"Bearer {CLOUDFLARE_TOKEN}"}
    assert CLOUDFLARE_TOKEN not in caplog.text

    # Publishing again finds everything there (SRV read back from data) and creates nothing.
    cloudflare.created.clear()
    again = await publisher.publish("example.com", records, CLOUDFLARE_TOKEN)
    assert cloudflare.created == []
    assert len(again.already_present) == len(records) - 1


async def test_subdomain_is_published_into_its_parent_zone(cloudflare):
    cloudflare.add_zone("example.com")
    result = await CloudflarePublisher(cloudflare.base_url).publish(
        "mail.example.com", record_set("mail.example.com", HOSTING, []), CLOUDFLARE_TOKEN
    )
    assert result.zone == "example.com"
    assert ("MX", "mail.example.com") in {(b["type"], b["name"]) for b in cloudflare.created}


async def test_provider_errors_become_provider_errors(cloudflare):
    publisher = CloudflarePublisher(cloudflare.base_url)
    records = record_set("example.com", HOSTING, [])
    with pytest.raises(ProviderError) as bad_token:
        await publisher.publish("example.com", records, "wrong-token")
    assert bad_token.value.kind == "auth"
    assert "Authentication error (code 10000)" in bad_token.value.message
    assert "wrong-token" not in bad_token.value.message

    with pytest.raises(ProviderError) as no_zone:
        await publisher.publish("example.com", records, CLOUDFLARE_TOKEN)
    assert no_zone.value.kind == "zone"

    cloudflare.add_zone("example.com")
    cloudflare.fail_create = {"code": 81057, "message": "Record already exists."}
    with pytest.raises(ProviderError) as rejected:
        await publisher.publish("example.com", records, CLOUDFLARE_TOKEN)
    assert rejected.value.kind == "rejected"
    assert "Record already exists. (code 81057)" in rejected.value.message
    assert "at MX example.com; created before: none" in rejected.value.message

    unreachable = CloudflarePublisher("http://127.0.0.1:9/client/v4", timeout=2)
    with pytest.raises(ProviderError) as down:
        await unreachable.publish("example.com", records, CLOUDFLARE_TOKEN)
    assert down.value.kind == "unavailable"
    # Raised "from None": no chained aiohttp error carries the request into a trace.
    assert down.value.__cause__ is None and down.value.__suppress_context__
    assert down.value.to_mail_error().status == 502


def test_txt_content_unquoting():
    assert unquote_txt('"v=spf1 mx -all"') == "v=spf1 mx -all"
    assert unquote_txt('"abc" "def"') == "abcdef"
    assert unquote_txt('"a \\"q\\""') == 'a "q"'
    assert unquote_txt("bare text") == "bare text"
