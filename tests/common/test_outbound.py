"""The SSRF-safe outbound client and the Standard Webhooks helpers of common/."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import web
from standardwebhooks.webhooks import Webhook as ReferenceVerifier

from common.outbound import OutboundClient, TargetRefused, is_public_address
from common.webhooks import generate_secret, signed_headers, verify


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),  # cloud metadata
        ("0.0.0.0", False),
        ("100.64.0.1", False),  # carrier-grade NAT
        ("224.0.0.1", False),
        ("::1", False),
        ("::", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("ff02::1", False),
        ("::ffff:127.0.0.1", False),  # IPv4-mapped loopback
        ("::ffff:169.254.169.254", False),
        ("::ffff:93.184.216.34", True),
        ("2002:7f00:1::", False),  # 6to4 around 127.0.0.1
    ],
)
def test_only_public_unicast_addresses_are_reachable(address: str, public: bool) -> None:
    assert is_public_address(address) is public


@pytest.fixture
async def loopback(aiohttp_server: Any) -> tuple[list[str], str]:
    hits: list[str] = []

    async def handle(request: web.Request) -> web.Response:
        hits.append(request.path)
        if request.path == "/bounce":
            raise web.HTTPFound("/inside")
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    server = await aiohttp_server(app)
    return hits, str(server.make_url("/")).rstrip("/")


async def test_loopback_targets_are_refused_at_connect_time(loopback) -> None:
    hits, base = loopback
    port = base.rsplit(":", 1)[1]
    async with OutboundClient() as client:
        for url in (
            f"{base}/x",
            f"http://localhost:{port}/x",
            f"http://[::ffff:127.0.0.1]:{port}/",
        ):
            with pytest.raises(TargetRefused):
                await client.post(url, b"{}", {})
    assert hits == []  # nothing reached the receiver


async def test_with_allow_private_the_target_is_reached_and_redirects_are_not_followed(
    loopback,
) -> None:
    hits, base = loopback
    async with OutboundClient(allow_private=True) as client:
        answer = await client.post(f"{base}/bounce", b"{}", {})
    assert answer.status == 302 and hits == ["/bounce"]  # never /inside


def test_our_signature_is_the_reference_one_and_our_verifier_accepts_it() -> None:
    secret = generate_secret()
    assert secret.startswith("whsec_") and len(base64.b64decode(secret[6:])) == 32
    body = b'{"type":"entry.published"}'
    headers = signed_headers(secret, "msg_1", 1_700_000_000, body)
    reference = ReferenceVerifier(secret)
    expected = reference.sign("msg_1", datetime.fromtimestamp(1_700_000_000, UTC), body.decode())
    assert headers["webhook-signature"] == expected
    assert verify(secret, headers, body, now=1_700_000_100)
    assert not verify(secret, headers, body, now=1_700_000_000 + 301)  # stale
    assert not verify(secret, headers, body + b" ", now=1_700_000_000)
    assert not verify(generate_secret(), headers, body, now=1_700_000_000)
    rotated = {**headers, "webhook-signature": "v1,bm9wZQ== " + headers["webhook-signature"]}
    assert verify(secret, rotated, body, now=1_700_000_000)
