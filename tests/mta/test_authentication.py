"""SPF, DKIM and DMARC on inbound mail, keys served by a loopback DNS server."""

from __future__ import annotations

import email
from dataclasses import replace
from email import policy

import dkim
import pytest

from common.db import Database
from mail.dkim import keys
from mta.authentication import spf
from mta.authentication.dns import Resolver
from mta.authentication.results import strip_forged
from mta.context import MtaContext
from mta.smtp import server
from mta.store import emails
from tests.mta import factories
from tests.mta.conftest import send
from tests.mta.dnsserver import LoopbackDNS


@pytest.fixture(scope="module")
def rsa_key() -> tuple[bytes, str]:
    """A key as the panel makes them (mail/dkim/keys.py): dkimpy's private format, DNS p=."""
    pair = keys.generate_sync(keys.RSA)
    return pair.private_key, pair.public_key_b64


def publish(dns_server: LoopbackDNS, public: str, *, spf_network: str) -> None:
    """sender.test's DKIM key, SPF record and a DMARC reject policy."""
    dns_server.add("sel._domainkey.sender.test", "TXT", keys.record_value(keys.RSA, public))
    dns_server.add("sender.test", "TXT", f"v=spf1 ip4:{spf_network} -all")
    dns_server.add("_dmarc.sender.test", "TXT", "v=DMARC1; p=reject")


def signed(private: bytes, *, domain: str = "sender.test", subject: str = "Signed") -> bytes:
    raw = (
        f"From: Bob <bob@{domain}>\r\nTo: alice@example.test\r\nSubject: {subject}\r\n"
        f"Message-ID: <{subject}@{domain}>\r\n\r\nA signed body.\r\n"
    ).encode()
    signature = dkim.sign(
        raw, b"sel", domain.encode(), private, include_headers=[b"from", b"to", b"subject"]
    )
    return signature + raw


async def stored_message(
    db: Database, ctx: MtaContext, address_id: str
) -> tuple[dict, email.message.EmailMessage]:  # type: ignore[type-arg]
    async with db.connection() as conn:
        rows = await emails.for_address(conn, address_id)
    assert len(rows) == 1
    raw = await ctx.blobs.get(rows[0]["blob_id"])
    return rows[0], email.message_from_bytes(raw, policy=policy.default)  # type: ignore[return-value]


async def test_dkim_pass_spf_pass_dmarc_pass_goes_to_inbox(
    db: Database,
    mta_ctx: MtaContext,
    smtp_port: int,
    dns_server: LoopbackDNS,
    rsa_key: tuple[bytes, str],
) -> None:
    private, public = rsa_key
    publish(dns_server, public, spf_network="127.0.0.0/8")
    owner = await factories.mailbox_owner(db, "alice@example.test")
    result = await send(smtp_port, "bob@sender.test", ["alice@example.test"], signed(private))
    assert result["data"][0] == 250
    row, msg = await stored_message(db, mta_ctx, owner["address_id"])
    results = msg["Authentication-Results"]
    assert "dkim=pass header.d=sender.test header.s=sel" in results
    assert "spf=pass smtp.mailfrom=bob@sender.test" in results
    assert "dmarc=pass (p=reject) header.from=sender.test" in results
    assert row["folders"] == ["Inbox"]


async def test_dkim_fail_with_dmarc_reject_goes_to_junk(
    db: Database,
    mta_ctx: MtaContext,
    smtp_port: int,
    dns_server: LoopbackDNS,
    rsa_key: tuple[bytes, str],
) -> None:
    private, public = rsa_key
    publish(dns_server, public, spf_network="192.0.2.1")  # not us: SPF fails
    owner = await factories.mailbox_owner(db, "alice@example.test")
    tampered = signed(private).replace(b"A signed body.", b"A forged body.")
    result = await send(smtp_port, "bob@sender.test", ["alice@example.test"], tampered)
    assert result["data"][0] == 250
    row, msg = await stored_message(db, mta_ctx, owner["address_id"])
    results = msg["Authentication-Results"]
    assert "dkim=fail header.d=sender.test" in results
    assert "spf=fail" in results
    assert "dmarc=fail (p=reject)" in results
    assert row["folders"] == ["Junk"]
    outcome = await db.fetch_val(
        "SELECT outcome FROM mta.activity WHERE address_id = %s", (owner["address_id"],)
    )
    assert "DMARC" in outcome


async def test_dmarc_reject_can_refuse_instead(
    db: Database, mta_ctx: MtaContext, dns_server: LoopbackDNS, rsa_key: tuple[bytes, str]
) -> None:
    private, _public = rsa_key  # no key published: DKIM permerror
    dns_server.add("_dmarc.sender.test", "TXT", "v=DMARC1; p=reject")
    owner = await factories.mailbox_owner(db, "alice@example.test")
    ctx = replace(mta_ctx, config=replace(mta_ctx.config, dmarc_reject_action="refuse"))
    async with server.serve(ctx) as srv:
        result = await send(
            server.bound_port(srv), "bob@sender.test", ["alice@example.test"], signed(private)
        )
    assert result["data"][0] == 550 and "5.7.1" in result["data"][1]
    assert await db.fetch_val("SELECT count(*) FROM mta.emails") == 0
    kind = await db.fetch_val(
        "SELECT kind FROM mta.activity WHERE address_id = %s", (owner["address_id"],)
    )
    assert kind == "refused"


async def test_forged_authentication_results_claiming_to_be_ours_are_removed(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    raw = (
        b"Authentication-Results: mx.test; dkim=pass header.d=bank.test;\r\n\tdmarc=pass\r\n"
        b"Authentication-Results: other.test; spf=none\r\n"
        b"From: bob@sender.test\r\nSubject: forged\r\n\r\nbody\r\n"
    )
    assert (await send(smtp_port, "bob@sender.test", ["alice@example.test"], raw))["data"][0] == 250
    _row, msg = await stored_message(db, mta_ctx, owner["address_id"])
    values = msg.get_all("Authentication-Results") or []
    assert len(values) == 2
    assert "bank.test" not in " ".join(values)
    assert values[1] == "other.test; spf=none"


# Forms of a forged field claiming to be mx.test that a mail reader would take as ours.
FORGED_FORMS = [
    b"Authentication-Results: mx.test; dkim=pass header.d=bank.test\r\n",
    b"Authentication-Results:\r\n mx.test;\r\n\tdkim=pass header.d=bank.test\r\n",
    b"Authentication-Results : mx.test; dkim=pass header.d=bank.test\r\n",
    b"Authentication-Results\t:mx.test;dkim=pass header.d=bank.test\r\n",
    b"aUTHENTICATION-rESULTS: MX.Test; dkim=pass header.d=bank.test\r\n",
    b"Authentication-Results: (our (very own) server) mx.test 1; dkim=pass header.d=bank.test\r\n",
    b"Authentication-Results: mx.test\r\n 1\r\n ; dkim=pass header.d=bank.test\r\n",
    b'Authentication-Results: "mx.test"; dkim=pass header.d=bank.test\r\n',
    b"Authentication-Results: mx.test.; dkim=pass header.d=bank.test\r\n",
    b"Authentication-Results: (unterminated mx.test; dkim=pass header.d=bank.test\r\n",
]


async def test_forged_authentication_results_are_removed_however_written(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    raw = (
        b"".join(FORGED_FORMS)
        + b"Authentication-Results: mx.test.evil.test; spf=pass\r\n"
        + b"Authentication-Results: other.test;\r\n spf=none\r\n"
        + b"From: bob@sender.test\r\nSubject: forged\r\n\r\nbody\r\n"
    )
    assert (await send(smtp_port, "bob@sender.test", ["alice@example.test"], raw))["data"][0] == 250
    async with db.connection() as conn:
        [row] = await emails.for_address(conn, owner["address_id"])
    stored = await mta_ctx.blobs.get(row["blob_id"])
    assert b"bank.test" not in stored
    msg = email.message_from_bytes(stored, policy=policy.default)
    values = msg.get_all("Authentication-Results") or []
    assert [v.split(";")[0] for v in values] == ["mx.test", "mx.test.evil.test", "other.test"]
    assert "spf=none" in values[0]  # ours, put in front


@pytest.mark.parametrize("forged", FORGED_FORMS)
def test_strip_forged_drops_each_form_whole(forged: bytes) -> None:
    raw = b"Subject: s\r\n" + forged + b"X-After: kept\r\n\r\nbody\r\n"
    assert strip_forged(raw, "mx.test") == b"Subject: s\r\nX-After: kept\r\n\r\nbody\r\n"


def test_strip_forged_keeps_the_body() -> None:
    raw = b"Authentication-Results: mx.test; x\r\nSubject: s\r\n\r\nAuthentication-Results: mx.test\r\n"
    assert strip_forged(raw, "mx.test") == b"Subject: s\r\n\r\nAuthentication-Results: mx.test\r\n"


@pytest.mark.parametrize(
    ("record", "ip", "expected"),
    [
        ("v=spf1 ip4:10.0.0.0/8 -all", "10.1.2.3", "pass"),
        ("v=spf1 ip4:10.0.0.0/8 -all", "11.1.2.3", "fail"),
        ("v=spf1 ip4:10.0.0.0/8 ~all", "11.1.2.3", "softfail"),
        ("v=spf1 a -all", "10.9.9.9", "pass"),
        ("v=spf1 mx/24 -all", "10.8.8.200", "pass"),
        ("v=spf1 include:inc.test -all", "10.7.7.7", "pass"),
        ("v=spf1 redirect=inc.test", "10.7.7.7", "pass"),
        ("v=spf1 exists:%{i}.allow.test -all", "10.6.6.6", "pass"),
        ("v=spf1 ip6:2001:db8::/32 -all", "2001:db8::1", "pass"),
        ("v=spf1 bogus:x -all", "10.1.1.1", "permerror"),
        ("v=spf1 ?all", "10.1.1.1", "neutral"),
    ],
)
async def test_spf_mechanisms(dns_server: LoopbackDNS, record: str, ip: str, expected: str) -> None:
    dns_server.add("spf.test", "TXT", record)
    dns_server.add("spf.test", "A", "10.9.9.9")
    dns_server.add("spf.test", "MX", "10 mx.spf.test.")
    dns_server.add("mx.spf.test", "A", "10.8.8.1")
    dns_server.add("inc.test", "TXT", "v=spf1 ip4:10.7.7.7 -all")
    dns_server.add("10.6.6.6.allow.test", "A", "127.0.0.2")
    resolver = Resolver([dns_server.nameserver], timeout=2)
    result = await spf.check(resolver, ip, "someone@spf.test", "helo.test")
    assert result.result == expected


async def test_spf_none_and_lookup_limit(dns_server: LoopbackDNS) -> None:
    resolver = Resolver([dns_server.nameserver], timeout=2)
    assert (await spf.check(resolver, "10.0.0.1", "a@nospf.test", "h")).result == "none"
    for i in range(12):
        dns_server.add(f"loop{i}.test", "TXT", f"v=spf1 include:loop{i + 1}.test -all")
    assert (await spf.check(resolver, "10.0.0.1", "a@loop0.test", "h")).result == "permerror"


async def test_answers_are_kept_for_their_ttl_and_nxdomain_for_the_soa_minimum(
    dns_server: LoopbackDNS,
) -> None:
    now = [1000.0]
    dns_server.add("kept.test", "TXT", "v=spf1 -all")
    resolver = Resolver([dns_server.nameserver], timeout=2, clock=lambda: now[0])

    def asked(name: str) -> int:
        return sum(1 for queried, _ in dns_server.queries if queried == name)

    for _ in range(3):
        assert await resolver.txt("kept.test") == ["v=spf1 -all"]
        assert await resolver.txt("missing.test") == []
    assert (asked("kept.test"), asked("missing.test")) == (1, 1)
    now[0] += 59  # both TTLs are 60 s (the SOA minimum for the NXDOMAIN)
    await resolver.txt("kept.test")
    await resolver.txt("missing.test")
    assert (asked("kept.test"), asked("missing.test")) == (1, 1)
    now[0] += 2
    dns_server.records["kept.test"]["TXT"] = ['"v=spf1 ip4:10.0.0.1 -all"']
    assert await resolver.txt("kept.test") == ["v=spf1 ip4:10.0.0.1 -all"]
    await resolver.txt("missing.test")
    assert (asked("kept.test"), asked("missing.test")) == (2, 2)


async def test_an_empty_answer_without_an_soa_is_not_kept(dns_server: LoopbackDNS) -> None:
    dns_server.add("exists.test", "A", "10.0.0.1")
    resolver = Resolver([dns_server.nameserver], timeout=2)
    assert await resolver.txt("exists.test") == []
    assert await resolver.txt("exists.test") == []
    assert sum(1 for q in dns_server.queries if q == ("exists.test", "TXT")) == 2
