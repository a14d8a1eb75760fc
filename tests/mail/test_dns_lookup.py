"""Real DNS lookups against the loopback server; DKIM signatures verified through it."""

from __future__ import annotations

import asyncio

import dkim
import dns.resolver
import pytest

from common.mail_settings import Nameserver
from mail.dkim import keys
from mail.dns import status
from mail.dns.lookup import Resolver
from mail.dns.providers.detect import detect
from mail.dns.records import DkimKeyRef, record_set
from mail.domains.settings import HostingSettings

HOSTING = HostingSettings(mail_hostname="mx.mailhost.test", web_hostname="panel.mailhost.test")


def resolver_for(server) -> Resolver:
    return Resolver([Nameserver("127.0.0.1", server.port)], timeout=2)


async def test_lookups_give_verified_missing_and_mismatch(dns_server):
    pair = await keys.generate(keys.RSA)
    records = record_set(
        "example.com", HOSTING, [DkimKeyRef("rsa1", keys.RSA, pair.public_key_b64)]
    )
    # Publish everything correctly, then break some of it.
    dns_server.publish(records)
    dns_server.add("example.com", "MX", "10 elsewhere.example.net.", replace=True)
    dns_server.remove("_dmarc.example.com", "TXT")
    dns_server.add("example.com", "TXT", '"google-site-verification=xyz"')
    found = await resolver_for(dns_server).lookup_many((r.name, r.type) for r in records)
    verdicts = {r.purpose: status.evaluate(r, found[r.key]) for r in records}
    assert verdicts.pop("mx") == status.MISMATCH
    assert verdicts.pop("dmarc") == status.MISSING
    # The 2048-bit key's record is longer than 512 bytes, split into several strings.
    assert verdicts.pop("dkim") == status.VERIFIED
    assert set(verdicts.values()) == {status.VERIFIED}


async def test_unreachable_resolver_is_an_error_not_missing():
    # Nothing listens there: the lookup fails, which must not read as "missing".
    resolver = Resolver([Nameserver("127.0.0.1", 9)], timeout=1)
    found = await resolver.lookup("example.com", "MX")
    assert found is None


async def test_provider_detected_from_ns_records(dns_server):
    dns_server.add("example.com", "NS", "ada.ns.cloudflare.com.", "bob.ns.cloudflare.com.")
    found = await resolver_for(dns_server).lookup("example.com", "NS")
    assert detect(found or []).id == "cloudflare"


@pytest.mark.parametrize(
    ("ns", "provider"),
    [
        (["ns-123.awsdns-15.com.", "ns-900.awsdns-40.net."], "route53"),
        (["ns-cloud-a1.googledomains.com."], "google"),
        (["ns1.digitalocean.com.", "ns2.digitalocean.com."], "digitalocean"),
        (["hydrogen.ns.hetzner.com.", "helium.ns.hetzner.de."], "hetzner"),
        (["dns200.anycast.me.", "ns200.anycast.me."], "ovh"),
        (["dns10.ovh.net."], "ovh"),
        (["dns1.registrar-servers.com."], "namecheap"),
        (["ns51.domaincontrol.com."], "godaddy"),
        (["ns1.example-dns.net."], "unknown"),
        ([], "unknown"),
    ],
)
def test_provider_detection_table(ns, provider):
    assert detect(ns).id == provider


@pytest.mark.parametrize("algorithm", [keys.RSA, keys.ED25519])
async def test_dkimpy_signature_verifies_against_the_published_record(
    dns_server,
    algorithm,
):
    pair = await keys.generate(algorithm)
    records = record_set(
        "example.com", HOSTING, [DkimKeyRef("sel1", algorithm, pair.public_key_b64)]
    )
    dns_server.publish(r for r in records if r.purpose == "dkim")
    message = (
        b"From: Ann <ann@example.com>\r\nTo: bob@example.net\r\nSubject: hello\r\n"
        b"Date: Sun, 22 Nov 2026 01:00:00 +0000\r\nMessage-ID: <1@example.com>\r\n\r\n"
        b"Hello Bob.\r\n"
    )
    signature = dkim.sign(
        message,
        b"sel1",
        b"example.com",
        pair.private_key,
        signature_algorithm=algorithm.encode(),
        include_headers=[b"from", b"to", b"subject", b"date", b"message-id"],
    )
    signed = signature + message

    resolver = dns.resolver.Resolver(configure=False)
    resolver.nameservers = ["127.0.0.1"]
    resolver.port = dns_server.port

    def dnsfunc(name: bytes, timeout: int = 5) -> bytes | None:
        answer = resolver.resolve(name.decode().rstrip("."), "TXT", lifetime=timeout)
        return b"".join(b"".join(r.strings) for r in answer)

    # dkimpy's resolver is synchronous: run it off the loop serving DNS.
    assert await asyncio.to_thread(dkim.verify, signed, dnsfunc=dnsfunc)
    tampered = signed.replace(b"Hello Bob.", b"Hello Eve.")
    assert not await asyncio.to_thread(dkim.verify, tampered, dnsfunc=dnsfunc)
