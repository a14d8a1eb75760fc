"""TLS to remote servers: opportunistic STARTTLS, and MTA-STS where a domain publishes it."""

from __future__ import annotations

import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from common.runtime import Runtime
from mta import mailstore
from mta.authentication.dns import Resolver
from mta.context import MtaContext
from mta.outbound.mtasts import PolicyCache, parse_policy, record_id
from mta.outbound.routing import RouteFailure, route
from mta.outbound.worker import OutboundWorker
from mta.settings import MtaSettings
from mta.submission.tls import self_signed, server_context
from tests.mta import sending
from tests.mta.dnsserver import LoopbackDNS

POLICY = (
    "version: STSv1\nmode: enforce\nmx: mx.secure.test\nmx: *.backup.secure.test\nmax_age: 86400\n"
)


async def test_starttls_is_used_whenever_the_receiver_offers_it(
    runtime: Runtime, dns_server: LoopbackDNS, mta_config: MtaSettings, tmp_path: Path
) -> None:
    alice = await sending.hosted_sender(runtime.db)
    cert, key = self_signed(tmp_path, "mx.remote.test")
    async with sending.receiver(tls=server_context(cert, key)) as (handler, port):
        sending.mx(dns_server, "remote.test")
        async with runtime.db.transaction() as conn:
            await mailstore.enqueue(
                conn,
                message_id=str(uuid.uuid4()),
                account_id=alice.account_id,
                source="api",
                mail_from=alice.email,
                recipients=["bob@remote.test"],
                raw=b"From: alice@example.test\r\nSubject: tls\r\n\r\nhi\r\n",
                now=runtime.clock.now(),
            )
        config = replace(mta_config, outbound_smtp_port=port, mta_sts=False)
        worker = OutboundWorker(MtaContext.build(runtime, config))
        try:
            await worker.drain()
        finally:
            await worker.close()
        [got] = handler.messages
        # A self-signed certificate: no MTA-STS, so TLS without verification (RFC 7435).
        assert got.tls


def test_a_policy_is_parsed_and_matches_its_mx_patterns() -> None:
    assert record_id(["v=STSv1; id=20300101T000000"]) == "20300101T000000"
    assert record_id(["v=spf1 -all"]) is None
    policy = parse_policy("1", POLICY)
    assert policy is not None and policy.mode == "enforce" and policy.max_age == 86400
    assert policy.matches("mx.secure.test") and policy.matches("MX.SECURE.TEST.")
    assert policy.matches("a.backup.secure.test")
    assert not policy.matches("a.b.backup.secure.test")  # one label only (RFC 8461 4.1)
    assert not policy.matches("evil.test")
    assert parse_policy("1", "version: STSv1\nmode: enforce\nmax_age: 5\n") is None  # no mx
    assert parse_policy("1", "version: STSv2\nmode: none\nmax_age: 5\n") is None


async def test_an_enforced_policy_keeps_only_listed_mx_hosts_and_requires_tls(
    dns_server: LoopbackDNS,
) -> None:
    dns_server.add("secure.test", "MX", "10 mx.evil.test.")
    dns_server.add("secure.test", "MX", "20 mx.secure.test.")
    dns_server.add("mx.evil.test", "A", "127.0.0.2")
    dns_server.add("mx.secure.test", "A", "127.0.0.1")
    dns_server.add("_mta-sts.secure.test", "TXT", "v=STSv1; id=1")
    fetched: list[str] = []

    async def fetch(url: str) -> tuple[int, bytes]:
        fetched.append(url)
        return 200, POLICY.encode()

    resolver = Resolver((dns_server.nameserver,), timeout=2)
    policies = PolicyCache(resolver, fetch)
    found = await route(resolver, "secure.test", relay=None, port=25, policies=policies)
    assert [h.name for h in found.hosts] == ["mx.secure.test"] and found.require_tls
    await route(resolver, "secure.test", relay=None, port=25, policies=policies)
    assert fetched == ["https://mta-sts.secure.test/.well-known/mta-sts.txt"]  # cached

    # No MX the policy lists: a temporary failure, never a fallback to plaintext.
    dns_server.add("locked.test", "MX", "10 mx.evil.test.")
    dns_server.add("_mta-sts.locked.test", "TXT", "v=STSv1; id=1")
    with pytest.raises(RouteFailure) as refused:
        await route(resolver, "locked.test", relay=None, port=25, policies=policies)
    assert not refused.value.permanent and "MTA-STS" in refused.value.reply

    # The relay (a sandbox) bypasses MX and policies alike.
    relayed = await route(
        resolver, "secure.test", relay=("127.0.0.1", 2525), port=25, policies=policies
    )
    assert relayed.hosts[0].name == "127.0.0.1" and relayed.port == 2525


async def test_an_enforced_policy_refuses_plaintext_and_unverified_certificates(
    tmp_path: Path,
) -> None:
    from mta.outbound.client import ConnectFailed, Connections
    from mta.outbound.routing import Host, Route

    connections = Connections("mx.test", per_destination=2, idle=5, timeout=5)
    cert, key = self_signed(tmp_path, "mx.secure.test")
    try:
        async with sending.receiver() as (_, plain_port):
            route_ = Route("d", (Host("mx.secure.test", ("127.0.0.1",)),), plain_port, True)
            with pytest.raises(ConnectFailed, match="offers no STARTTLS"):
                async with connections.session(route_):
                    pass
        async with sending.receiver(tls=server_context(cert, key)) as (_, tls_port):
            route_ = Route("e", (Host("mx.secure.test", ("127.0.0.1",)),), tls_port, True)
            with pytest.raises(ConnectFailed, match=r"CERTIFICATE_VERIFY_FAILED|certificate"):
                async with connections.session(route_):
                    pass
            # Without a policy the same server is used, over TLS.
            opportunistic = replace(route_, key="f", require_tls=False)
            async with connections.session(opportunistic) as session:
                assert session.client.get_transport_info("sslcontext") is not None
    finally:
        await connections.close()
