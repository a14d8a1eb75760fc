"""Domain names, the expected record set, the zone export and record matching."""

from __future__ import annotations

import dns.name
import dns.rdatatype
import dns.zone
import pytest

from common.settings import Settings, SettingsError
from mail.dkim import keys
from mail.dns import status
from mail.dns.records import DkimKeyRef, record_set
from mail.dns.zone import zone_text
from mail.domains.names import InvalidDomainName, normalize_domain, unicode_domain
from mail.domains.settings import HostingSettings, load_hosting_settings

HOSTING = HostingSettings(
    mail_hostname="mx.mailhost.test",
    web_hostname="panel.mailhost.test",
    web_port=443,
    web_is_https=True,
    public_url="https://panel.mailhost.test",
)


@pytest.fixture(scope="module")
def rsa_key() -> keys.KeyPair:
    return keys.generate_sync(keys.RSA)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Example.COM", "example.com"),
        ("example.com.", "example.com"),
        ("  mail.example.org ", "mail.example.org"),
        ("Bücher.example", "xn--bcher-kva.example"),
        ("xn--bcher-kva.example", "xn--bcher-kva.example"),
        ("例え.テスト", "xn--r8jz45g.xn--zckzah"),
    ],
)
def test_domain_names_are_stored_in_ascii_lower_case(raw, expected):
    assert normalize_domain(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "localhost",
        "exa mple.com",
        "-bad.example.com",
        "bad-.example.com",
        "under_score.example.com",
        "a..b.com",
        "192.0.2.1",
        "x" * 64 + ".com",
        ("a" * 60 + ".") * 5 + "com",
        "user@example.com",
    ],
)
def test_invalid_domain_names_are_refused(raw):
    with pytest.raises(InvalidDomainName):
        normalize_domain(raw)


def test_unicode_form_is_shown_for_idn():
    assert unicode_domain("xn--bcher-kva.example") == "bücher.example"


def test_record_set_has_every_record_with_its_expected_value(rsa_key):
    ed = keys.generate_sync(keys.ED25519)
    records = record_set(
        "example.com",
        HOSTING,
        [
            DkimKeyRef("rsa1", keys.RSA, rsa_key.public_key_b64),
            DkimKeyRef("ed1", keys.ED25519, ed.public_key_b64),
        ],
    )
    by_purpose = {}
    for r in records:
        by_purpose.setdefault(r.purpose, []).append(r)
    assert by_purpose["mx"][0].value == "10 mx.mailhost.test."
    assert by_purpose["spf"][0].value == "v=spf1 mx -all"
    assert [r.name for r in by_purpose["dkim"]] == [
        "rsa1._domainkey.example.com",
        "ed1._domainkey.example.com",
    ]
    assert by_purpose["dkim"][0].value == f"v=DKIM1; k=rsa; p={rsa_key.public_key_b64}"
    assert by_purpose["dkim"][1].value == f"v=DKIM1; k=ed25519; p={ed.public_key_b64}"
    assert by_purpose["dmarc"][0].name == "_dmarc.example.com"
    assert by_purpose["dmarc"][0].value == "v=DMARC1; p=quarantine"
    assert by_purpose["mta_sts"][0].name == "_mta-sts.example.com"
    assert by_purpose["mta_sts"][0].value.startswith("v=STSv1; id=")
    assert by_purpose["mta_sts_host"][0].value == "panel.mailhost.test."
    assert by_purpose["tls_rpt"][0].name == "_smtp._tls.example.com"
    assert by_purpose["tls_rpt"][0].value == "v=TLSRPTv1; rua=mailto:postmaster@example.com"
    assert by_purpose["autoconfig"][0].name == "autoconfig.example.com"
    assert by_purpose["autodiscover"][0].name == "autodiscover.example.com"
    assert by_purpose["submission_srv"][0].name == "_submission._tcp.example.com"
    assert by_purpose["submission_srv"][0].value == "0 1 587 mx.mailhost.test."
    assert by_purpose["jmap_srv"][0].name == "_jmap._tcp.example.com"
    assert by_purpose["jmap_srv"][0].value == "0 1 443 panel.mailhost.test."
    # RFC 6186 / RFC 8314 / RFC 5804: implicit TLS preferred, IMAP before POP3.
    srv = {r.name: r.value for r in records if r.type == "SRV"}
    assert srv == {
        "_submission._tcp.example.com": "0 1 587 mx.mailhost.test.",
        "_submissions._tcp.example.com": "0 1 465 mx.mailhost.test.",
        "_imaps._tcp.example.com": "0 1 993 mx.mailhost.test.",
        "_imap._tcp.example.com": "10 1 143 mx.mailhost.test.",
        "_pop3s._tcp.example.com": "20 1 995 mx.mailhost.test.",
        "_pop3._tcp.example.com": "30 1 110 mx.mailhost.test.",
        "_sieve._tcp.example.com": "0 1 4190 mx.mailhost.test.",
        "_jmap._tcp.example.com": "0 1 443 panel.mailhost.test.",
    }


def test_srv_records_follow_the_listeners_settings():
    """A listener that is off has no SRV record; one on a fixed port names it; a
    submission port with implicit TLS is _submissions (RFC 8314 5.1)."""
    settings = Settings(
        public_url="https://panel.mailhost.test",
        environ={
            "MAIL_HOSTNAME": "mx.mailhost.test",
            "POP3_PORT": "off",
            "POP3S_PORT": "off",
            "IMAP_PORT": "off",
            "IMAPS_PORT": "1993",
            "SIEVE_PORT": "0",
            "SUBMISSION_SECURITY": "tls",
        },
    )
    records = record_set("example.com", load_hosting_settings(settings), [])
    srv = {r.name: r.value for r in records if r.type == "SRV"}
    assert srv == {
        "_submissions._tcp.example.com": "0 1 465 mx.mailhost.test.",
        "_imaps._tcp.example.com": "0 1 1993 mx.mailhost.test.",
        "_sieve._tcp.example.com": "0 1 4190 mx.mailhost.test.",
        "_jmap._tcp.example.com": "0 1 443 panel.mailhost.test.",
    }


def test_zone_export_reads_back_through_dnspython_to_the_same_records(rsa_key):
    records = record_set(
        "example.com", HOSTING, [DkimKeyRef("rsa1", keys.RSA, rsa_key.public_key_b64)]
    )
    text = zone_text("example.com", records)
    zone = dns.zone.from_text(text, origin="example.com.", relativize=False, check_origin=False)
    parsed = set()
    for name, ttl, rdata in zone.iterate_rdatas():
        rtype = dns.rdatatype.to_text(rdata.rdtype)
        value = b"".join(rdata.strings).decode() if rtype == "TXT" else rdata.to_text()
        parsed.add((name.to_text().rstrip("."), rtype, value, ttl))
    assert parsed == {(r.name, r.type, r.value, r.ttl) for r in records}
    # The 2048-bit DKIM key does not fit one TXT string: it was split, not cut.
    dkim = zone.get_rdataset(dns.name.from_text("rsa1._domainkey.example.com."), "TXT")
    assert len(next(iter(dkim)).strings) > 1


def _rec(purpose):
    return next(r for r in record_set("example.com", HOSTING, []) if r.purpose == purpose)


def test_status_verified_missing_mismatch_error():
    mx = _rec("mx")
    assert status.evaluate(mx, ["10 MX.mailhost.test."]) == status.VERIFIED
    assert status.evaluate(mx, []) == status.MISSING
    assert status.evaluate(mx, ["10 other.example.net."]) == status.MISMATCH
    assert status.evaluate(mx, None) == status.ERROR


def test_tagged_txt_matches_by_tags_and_ignores_unrelated_txt():
    spf = _rec("spf")
    assert status.evaluate(spf, ["google-site-verification=abc"]) == status.MISSING
    assert status.evaluate(spf, ["google-site-verification=abc", "v=spf1  mx -all"]) == (
        status.VERIFIED
    )
    assert status.evaluate(spf, ["v=spf1 include:_spf.example.net -all"]) == status.MISMATCH
    dmarc = _rec("dmarc")
    # The operator may add reporting tags; the policy is what we check.
    assert status.evaluate(dmarc, ["v=DMARC1; p=quarantine; rua=mailto:d@example.com"]) == (
        status.VERIFIED
    )
    assert status.evaluate(dmarc, ["v=DMARC1; p=none"]) == status.MISMATCH


def test_overall_status():
    assert status.overall([status.VERIFIED, status.VERIFIED]) == "verified"
    assert status.overall([status.VERIFIED, status.MISSING]) == "incomplete"
    assert status.overall([status.UNCHECKED]) == "unchecked"


def test_hosting_settings_parse_and_refuse_bad_values():
    env = {
        "MAIL_HOSTNAME": "MX.Example.NET",
        "DNS_RESOLVERS": "127.0.0.1:5353, 9.9.9.9, [::1]:53",
        "MTA_STS_MODE": "enforce",
        "MTA_STS_MAX_AGE": "86400",
        "SUBMISSION_SECURITY": "tls",
    }
    hosting = load_hosting_settings(Settings(public_url="https://panel.example.net", environ=env))
    assert hosting.mail_hostname == "mx.example.net"
    assert [(n.address, n.port) for n in hosting.dns_resolvers] == [
        ("127.0.0.1", 5353),
        ("9.9.9.9", 53),
        ("::1", 53),
    ]
    assert hosting.submission_port == 465
    assert (hosting.web_hostname, hosting.web_port) == ("panel.example.net", 443)
    for bad in (
        {"DNS_RESOLVERS": "resolver.example"},
        {"MTA_STS_MODE": "strict"},
        {"MTA_STS_MAX_AGE": "99999999"},
        {"SUBMISSION_SECURITY": "ssl"},
    ):
        with pytest.raises(SettingsError):
            load_hosting_settings(Settings(environ=bad))
