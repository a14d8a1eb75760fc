"""Mail to a suppressed address is reported `suppressed` (Resend's last_event), with an
`email.suppressed` event that the account's webhooks receive like any other.

Through the resend SDK against the gateway, the outbound queue, a loopback
receiving server for the recipients that are attempted, and a real HTTP
webhook receiver whose deliveries the reference Standard Webhooks library checks.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest
import resend

from common.settings import Settings
from tests.mail import test_sending_delivery, test_webhooks
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import hosting_env
from tests.mail.sending_helpers import api_key, bearer, sending_domain
from tests.mail.test_sending_delivery import MESSAGE
from tests.mail.test_webhooks import deliver_all, make_hook, verified

# The fixtures of those modules: the loopback receiver and the worker, a real
# webhook receiver, and the real now (the reference verifier checks
# webhook-timestamp against the wall clock).
remote = test_sending_delivery.remote
worker = test_sending_delivery.worker
receiver = test_webhooks.receiver
clock = test_webhooks.clock


@pytest.fixture
def settings(settings: Settings, dns_server: Any, cloudflare: Any) -> Settings:
    env = {
        **settings.environ,
        **hosting_env(dns_server, cloudflare.base_url),
        "WEBHOOK_ALLOW_PRIVATE": "true",  # the webhook receiver is on the loopback
    }
    return replace(settings, environ=MappingProxyType(env))


async def suppress(client: Any, headers: dict[str, str], email: str) -> None:
    resp = await client.post("/api/suppressions", json={"email": email}, headers=headers)
    assert resp.status == 201, await resp.text()


async def hook_payloads(client: Any, got: Any, secret: str) -> list[dict[str, Any]]:
    await deliver_all(client)
    return [verified(secret, headers, body) for headers, body in got.received]


async def test_mail_to_a_suppressed_address_is_reported_suppressed(
    client, runtime, dns_server, sdk, remote, worker, receiver
):
    handler, _ = remote
    got, url = receiver
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    hook = await make_hook(
        client, headers, url, events=["email.sent", "email.suppressed", "email.failed"]
    )
    key = await api_key(client, headers)
    await suppress(client, headers, "ann@example.org")

    sent = await sdk(key, resend.Emails.send, MESSAGE)
    assert await worker.drain() == 0 and handler.messages == []
    email = await sdk(key, resend.Emails.get, sent["id"])
    assert email["last_event"] == "suppressed"
    assert [(r["email"], r["status"], r["attempts"]) for r in email["recipients"]] == [
        ("ann@example.org", "suppressed", 0)
    ]
    [event] = email["events"]
    assert event["type"] == "email.suppressed"
    assert event["data"]["suppressed"]["recipient"] == "ann@example.org"
    assert event["data"]["suppressed"]["type"] == "OnAccountSuppressionList"
    assert event["data"]["tags"] == {"kind": "receipt"}
    listed = await sdk(key, resend.Emails.list)
    assert listed["data"][0]["last_event"] == "suppressed"

    [payload] = await hook_payloads(client, got, hook["secret"])
    assert payload["type"] == "email.suppressed"
    assert payload["data"]["email_id"] == sent["id"]
    assert payload["data"]["suppressed"]["recipient"] == "ann@example.org"


async def test_a_recipient_suppressed_after_queueing_is_reported_at_the_attempt(
    client, runtime, dns_server, sdk, remote, worker, receiver
):
    handler, _ = remote
    got, url = receiver
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    hook = await make_hook(client, headers, url, events=["email.suppressed", "email.failed"])
    key = await api_key(client, headers)
    sent = await sdk(key, resend.Emails.send, MESSAGE)
    await suppress(client, headers, "ann@example.org")

    await worker.drain()
    assert handler.messages == []
    email = await (await client.get(f"/api/emails/{sent['id']}", headers=bearer(key))).json()
    assert email["last_event"] == "suppressed"
    assert [e["type"] for e in email["events"]] == ["email.sent", "email.suppressed"]
    assert [p["type"] for p in await hook_payloads(client, got, hook["secret"])] == [
        "email.suppressed"
    ]


async def test_one_suppressed_recipient_among_others_does_not_hide_the_delivery(
    client, runtime, dns_server, sdk, remote, worker
):
    handler, _ = remote
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    await suppress(client, headers, "ann@example.org")

    sent = await sdk(
        key, resend.Emails.send, {**MESSAGE, "to": ["ann@example.org", "bo@example.org"]}
    )
    await worker.drain()
    [delivered] = handler.messages
    assert delivered.rcpts == ["bo@example.org"]
    email = await sdk(key, resend.Emails.get, sent["id"])
    assert email["last_event"] == "delivered"
    assert [r["status"] for r in email["recipients"]] == ["suppressed", "delivered"]
    types = [e["type"] for e in email["events"]]
    assert types == ["email.suppressed", "email.sent", "email.delivered"]
