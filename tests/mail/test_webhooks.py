"""Mail webhooks: endpoints, signed deliveries to a real local HTTP server, retries, replay.

Signatures are checked with the `standardwebhooks` package (the scheme's own
reference library, unmodified), not with our signing code. Its verifier
compares webhook-timestamp with the wall clock (5 minutes either way), so the
clock starts at the real now, and the retry test starts it in the past so
that the try it verifies happens at the real now.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any

import pytest
from aiohttp import web
from standardwebhooks.webhooks import Webhook as ReferenceVerifier
from standardwebhooks.webhooks import WebhookVerificationError

from common.clock import ManualClock
from common.settings import Settings
from gateway.app import services_key
from mail.context import MailContext
from mail.webhooks import delivery
from mail.webhooks.delivery import DISABLE_AFTER_SECONDS, RETRY_DELAYS
from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import add_domain, hosting_env


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime.now(UTC).replace(microsecond=0))


@pytest.fixture
def settings(settings: Settings, dns_server: Any, cloudflare: Any) -> Settings:
    env = {
        **settings.environ,
        **hosting_env(dns_server, cloudflare.base_url),
        # The receiver listens on loopback; test_a_private_target_is_refused runs without this.
        "WEBHOOK_ALLOW_PRIVATE": "true",
    }
    return replace(settings, environ=MappingProxyType(env))


class Receiver:
    """A real aiohttp server on 127.0.0.1 recording what it is sent."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.answers: list[int] = []
        self.text = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.received.append((dict(request.headers), await request.read()))
        status = self.answers.pop(0) if self.answers else 200
        return web.Response(status=status, text=self.text or f"receiver says {status}")


@pytest.fixture
async def receiver(aiohttp_server: Any) -> tuple[Receiver, str]:
    r = Receiver()
    app = web.Application()
    app.router.add_route("POST", "/{tail:.*}", r.handle)
    server = await aiohttp_server(app)
    return r, str(server.make_url("/hook"))


def verified(secret: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    """The payload, if the reference library accepts the signature (raises otherwise)."""
    payload = ReferenceVerifier(secret).verify(body, headers)
    assert isinstance(payload, dict)
    return payload


async def make_hook(client: Any, headers: dict[str, str], url: str, **extra: Any) -> dict[str, Any]:
    resp = await client.post("/api/webhooks", json={"endpoint": url, **extra}, headers=headers)
    assert resp.status == 201, await resp.text()
    return dict(await resp.json())


def mail_ctx(client: Any) -> MailContext:
    return client.server.app[services_key]["mail"].context


async def deliver_all(client: Any) -> None:
    """What the workers do: fan the event log out, then run the due tries."""
    ctx = mail_ctx(client)
    await delivery.fan_out(ctx)
    await ctx.runtime.jobs.run_due()


@pytest.fixture
def panel(client: Any) -> Any:
    return client


async def test_the_secret_is_shown_once_and_listings_show_a_prefix(panel, runtime, receiver):
    _, url = receiver
    _, headers = await signed_in(runtime)
    created = await make_hook(panel, headers, url, events=["domain.created"], description="ci")
    secret = created["secret"]
    assert secret.startswith("whsec_") and created["events"] == ["domain.created"]
    assert created["secret_hint"] == secret[:10] and created["status"] == "enabled"
    listed = await (await panel.get("/api/webhooks", headers=headers)).json()
    assert listed["object"] == "list" and listed["total"] == 1
    assert listed["data"][0]["secret_hint"] == secret[:10]
    one = await (await panel.get(f"/api/webhooks/{created['id']}", headers=headers)).json()
    patched = await panel.patch(
        f"/api/webhooks/{created['id']}", json={"description": "renamed"}, headers=headers
    )
    assert patched.status == 200
    for answer in (str(listed), str(one), await patched.text()):
        assert secret not in answer and 'secret"' not in answer
    assert "secret" not in one
    # Sealed at rest: the database holds no readable copy.
    stored = await runtime.db.fetch_val(
        "SELECT secret_sealed FROM mail.webhooks WHERE id = %s", (created["id"],)
    )
    assert secret not in stored and secret[6:] not in stored
    # A new secret comes only from rotate, once.
    rotated = await (
        await panel.post(f"/api/webhooks/{created['id']}/rotate", json={}, headers=headers)
    ).json()
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != secret
    again = await (await panel.get(f"/api/webhooks/{created['id']}", headers=headers)).json()
    assert rotated["secret"] not in str(again)


async def test_bad_bodies_and_other_accounts(panel, runtime, receiver):
    _, url = receiver
    _, headers = await signed_in(runtime)
    _, stranger = await signed_in(runtime)
    assert (await panel.post("/api/webhooks", json={}, headers=headers)).status == 422
    bad = await panel.post("/api/webhooks", json={"endpoint": "ftp://x.example/"}, headers=headers)
    assert bad.status == 400
    bad = await panel.post(
        "/api/webhooks", json={"endpoint": url, "events": ["email.nope"]}, headers=headers
    )
    assert bad.status == 400 and "email.nope" in (await bad.json())["message"]
    hook = await make_hook(panel, headers, url)
    # Every type when none is named.
    assert "email.received" in hook["events"] and "domain.deleted" in hook["events"]
    for method, path in [
        ("GET", f"/api/webhooks/{hook['id']}"),
        ("PATCH", f"/api/webhooks/{hook['id']}"),
        ("DELETE", f"/api/webhooks/{hook['id']}"),
        ("POST", f"/api/webhooks/{hook['id']}/rotate"),
        ("POST", f"/api/webhooks/{hook['id']}/test"),
        ("GET", f"/api/webhooks/{hook['id']}/events"),
    ]:
        resp = await panel.request(method, path, json={}, headers=stranger)
        assert resp.status == 404, (method, path)
    assert (await panel.get("/api/webhooks", headers=stranger)).status == 200
    assert (await (await panel.get("/api/webhooks", headers=stranger)).json())["total"] == 0
    assert (await panel.patch("/api/webhooks/events", json={}, headers=headers)).status == 405
    both = await panel.patch(
        f"/api/webhooks/{hook['id']}",
        json={"enabled": True, "description": "kept", "events": ["email.sent"]},
        headers=headers,
    )
    changed = await both.json()
    assert changed["description"] == "kept" and changed["events"] == ["email.sent"]
    off = await (
        await panel.patch(f"/api/webhooks/{hook['id']}", json={"enabled": False}, headers=headers)
    ).json()
    assert off["enabled"] is False and off["disabled_reason"] == "manual"
    assert (await panel.delete(f"/api/webhooks/{hook['id']}", headers=headers)).status == 204
    assert (await panel.get(f"/api/webhooks/{hook['id']}", headers=headers)).status == 404


async def test_a_domain_event_is_delivered_signed_and_listed_with_its_attempts(
    panel, runtime, receiver
):
    got, url = receiver
    _, headers = await signed_in(runtime)
    hook = await make_hook(panel, headers, url, events=["domain.created", "address.created"])
    domain = await add_domain(panel, headers, "hooks.example")
    await deliver_all(panel)
    [(sent_headers, body)] = got.received
    payload = verified(hook["secret"], sent_headers, body)
    assert payload["type"] == "domain.created"
    assert payload["data"]["id"] == domain["id"] and payload["data"]["name"] == "hooks.example"
    assert sent_headers["webhook-id"].startswith("msg_")
    # Signed by the endpoint's secret and by no other.
    with pytest.raises(WebhookVerificationError):
        verified("whsec_" + "QUJD" * 8, sent_headers, body)

    events = await (await panel.get("/api/webhooks/events", headers=headers)).json()
    assert events["object"] == "list" and events["total"] == 1
    [item] = events["data"]
    assert item["type"] == "domain.created" and item["status"] == "delivered"
    assert item["attempt_count"] == 1 and item["last_status"] == 200
    per_hook = await (await panel.get(f"/api/webhooks/{hook['id']}/events", headers=headers)).json()
    assert [e["id"] for e in per_hook["data"]] == [item["id"]]
    one = await (
        await panel.get(f"/api/webhooks/{hook['id']}/events/{item['id']}", headers=headers)
    ).json()
    assert one["payload"] == payload
    [attempt] = one["attempts"]
    assert attempt["status"] == 200 and attempt["ok"] and attempt["trigger"] == "scheduled"
    assert attempt["response"] == "receiver says 200" and attempt["duration_ms"] >= 0
    # A type the endpoint did not subscribe to is not sent.
    await panel.patch(
        f"/api/domains/{domain['id']}", json={"description": "changed"}, headers=headers
    )
    await deliver_all(panel)
    assert len(got.received) == 1


async def test_rotate_refuses_the_old_secret_and_test_returns_the_answer(panel, runtime, receiver):
    got, url = receiver
    _, headers = await signed_in(runtime)
    hook = await make_hook(panel, headers, url)
    got.answers = [418]
    tested = await (
        await panel.post(
            f"/api/webhooks/{hook['id']}/test", json={"type": "email.bounced"}, headers=headers
        )
    ).json()
    assert tested["object"] == "webhook_test" and tested["status"] == 418
    assert tested["ok"] is False and tested["response"] == "receiver says 418"
    sent_headers, body = got.received[-1]
    assert verified(hook["secret"], sent_headers, body)["type"] == "email.bounced"

    rotated = await (
        await panel.post(f"/api/webhooks/{hook['id']}/rotate", json={}, headers=headers)
    ).json()
    tested = await (
        await panel.post(f"/api/webhooks/{hook['id']}/test", json={}, headers=headers)
    ).json()
    assert tested["ok"] is True and tested["status"] == 200
    sent_headers, body = got.received[-1]
    assert verified(rotated["secret"], sent_headers, body)["type"] == "email.sent"
    with pytest.raises(WebhookVerificationError):
        verified(hook["secret"], sent_headers, body)
    # A test is recorded nowhere.
    events = await (await panel.get("/api/webhooks/events", headers=headers)).json()
    assert events["total"] == 0


async def test_replay_redelivers_with_a_fresh_attempt(panel, runtime, receiver):
    got, url = receiver
    _, headers = await signed_in(runtime)
    hook = await make_hook(panel, headers, url, events=["domain.created"])
    await add_domain(panel, headers, "replay.example")
    await deliver_all(panel)
    [event] = (await (await panel.get("/api/webhooks/events", headers=headers)).json())["data"]
    got.answers = [503]
    replayed = await panel.post(
        f"/api/webhooks/{hook['id']}/events/{event['id']}/replay", json={}, headers=headers
    )
    assert replayed.status == 200
    body = await replayed.json()
    assert [a["trigger"] for a in body["attempts"]] == ["scheduled", "replay"]
    assert [a["status"] for a in body["attempts"]] == [200, 503]
    assert len(got.received) == 2
    # The same message (webhook-id) each time, so a receiver can deduplicate.
    assert got.received[0][0]["webhook-id"] == got.received[1][0]["webhook-id"]
    assert got.received[0][1] == got.received[1][1]
    verified(hook["secret"], *got.received[1])
    assert (
        await panel.post(
            f"/api/webhooks/{hook['id']}/events/{hook['id']}/replay", json={}, headers=headers
        )
    ).status == 404


async def test_retries_after_500s_follow_the_schedule(panel, runtime, receiver, clock):
    got, url = receiver
    # The third try (after 5 s and 5 min) is the one verified against the wall clock.
    clock.set(datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=305))
    _, headers = await signed_in(runtime)
    hook = await make_hook(panel, headers, url, events=["domain.created"])
    await add_domain(panel, headers, "retry.example")
    got.answers = [500, 500]
    await deliver_all(panel)
    [event] = (await (await panel.get("/api/webhooks/events", headers=headers)).json())["data"]
    assert event["status"] == "retrying" and event["last_status"] == 500
    assert event["next_attempt_at"] is not None
    # Nothing is due before the schedule says so.
    clock.advance(RETRY_DELAYS[0] - 1)
    await runtime.jobs.run_due()
    assert len(got.received) == 1
    clock.advance(1)
    await runtime.jobs.run_due()
    assert len(got.received) == 2
    clock.advance(RETRY_DELAYS[1])
    await runtime.jobs.run_due()
    assert len(got.received) == 3
    one = await (
        await panel.get(f"/api/webhooks/{hook['id']}/events/{event['id']}", headers=headers)
    ).json()
    assert one["status"] == "delivered" and one["next_attempt_at"] is None
    assert [a["status"] for a in one["attempts"]] == [500, 500, 200]
    assert {h["webhook-id"] for h, _ in got.received} == {event["message_id"]}
    assert verified(hook["secret"], *got.received[-1])["type"] == "domain.created"
    read = await (await panel.get(f"/api/webhooks/{hook['id']}", headers=headers)).json()
    assert read["consecutive_failures"] == 0 and read["last_success_at"] is not None


async def test_a_run_of_failures_disables_the_endpoint_until_patched(
    panel, runtime, receiver, clock
):
    got, url = receiver
    _, headers = await signed_in(runtime)
    hook = await make_hook(panel, headers, url, events=["domain.created", "domain.deleted"])
    got.answers = [500] * 100
    domain = await add_domain(panel, headers, "failing.example")
    await deliver_all(panel)
    # Eight tries over about 27.6 hours, then the delivery is failed.
    for delay in RETRY_DELAYS:
        clock.advance(delay)
        await runtime.jobs.run_due()
    assert len(got.received) == len(RETRY_DELAYS) + 1
    [event] = (await (await panel.get("/api/webhooks/events", headers=headers)).json())["data"]
    assert event["status"] == "failed" and event["next_attempt_at"] is None
    read = await (await panel.get(f"/api/webhooks/{hook['id']}", headers=headers)).json()
    assert read["enabled"] is True and read["consecutive_failures"] == 8
    # Failing for five days: the next failure switches it off.
    clock.advance(DISABLE_AFTER_SECONDS)
    await panel.delete(f"/api/domains/{domain['id']}", headers=headers)
    await deliver_all(panel)
    read = await (await panel.get(f"/api/webhooks/{hook['id']}", headers=headers)).json()
    assert read["enabled"] is False and read["disabled_reason"] == "failing"
    received = len(got.received)
    await add_domain(panel, headers, "later.example")
    await deliver_all(panel)
    assert len(got.received) == received  # switched off: nothing more is sent
    patched = await (
        await panel.patch(f"/api/webhooks/{hook['id']}", json={"enabled": True}, headers=headers)
    ).json()
    assert patched["enabled"] is True and patched["disabled_reason"] is None
    assert patched["consecutive_failures"] == 0
    got.answers = []
    clock.set(datetime.now(UTC).replace(microsecond=0))  # for the reference verifier
    await add_domain(panel, headers, "again.example")
    await deliver_all(panel)
    assert len(got.received) == received + 1
    verified(hook["secret"], *got.received[-1])


async def test_a_private_target_is_refused(make_client, runtime, receiver):
    got, url = receiver
    client = await make_client({"RATE_LIMIT_PER_SECOND": "1000"})
    _, headers = await signed_in(runtime)
    for target in (url, "http://localhost/hook", "http://[::1]/x", "http://169.254.169.254/"):
        resp = await client.post("/api/webhooks", json={"endpoint": target}, headers=headers)
        assert resp.status == 400, target
        assert "private" in (await resp.json())["message"]
    # A name that passed the save check but resolves inside is refused at connect time.
    resp = await client.post(
        "/api/webhooks", json={"endpoint": "https://hooks.example.com/in"}, headers=headers
    )
    hook = await resp.json()
    await runtime.db.execute(
        "UPDATE mail.webhooks SET endpoint = %s WHERE id = %s",
        (url.replace("127.0.0.1", "localhost"), hook["id"]),
    )
    tested = await (
        await client.post(f"/api/webhooks/{hook['id']}/test", json={}, headers=headers)
    ).json()
    assert tested["ok"] is False and tested["status"] is None
    assert "TargetRefused" in tested["error"]
    assert got.received == []


async def test_the_listener_fans_out_as_soon_as_an_event_commits(panel, runtime, receiver):
    got, url = receiver
    _, headers = await signed_in(runtime)
    await make_hook(panel, headers, url, events=["domain.created"])
    ctx = mail_ctx(panel)
    async with delivery.listen(ctx):
        await add_domain(panel, headers, "listened.example")
        # Waiting for an effect, not for a time rule: the NOTIFY arrives at commit.
        for _ in range(200):
            queued = await runtime.db.fetch_val(
                "SELECT count(*) FROM common.jobs WHERE kind = %s", (delivery.DELIVER_JOB,)
            )
            if queued:
                break
            await asyncio.sleep(0.02)
    assert queued == 1
    await runtime.jobs.run_due()
    assert len(got.received) == 1


async def test_concurrent_fan_outs_deliver_each_event_once(panel, runtime, receiver):
    got, url = receiver
    _, headers = await signed_in(runtime)
    await make_hook(panel, headers, url, events=["address.created", "domain.created"])
    domain = await add_domain(panel, headers, "busy.example")
    for n in range(5):
        resp = await panel.post(
            f"/api/domains/{domain['id']}/addresses",
            json={"local_part": f"u{n}", "password": "a long mailbox password"},
            headers=headers,
        )
        assert resp.status == 201
    ctx = mail_ctx(panel)
    counts = await asyncio.gather(*(delivery.fan_out(ctx) for _ in range(3)))
    assert sum(counts) == 6
    await runtime.jobs.run_due()
    assert len(got.received) == 6
    ids = {h["webhook-id"] for h, _ in got.received}
    assert len(ids) == 6


async def test_domain_and_address_events_are_written_with_their_changes(panel, runtime, clock):
    account, headers = await signed_in(runtime)
    domain = await add_domain(panel, headers, "events.example")
    clock.advance(1)  # events of one instant have no order
    made = await panel.post(
        f"/api/domains/{domain['id']}/addresses",
        json={"local_part": "ann", "password": "a long mailbox password"},
        headers=headers,
    )
    address = await made.json()
    base = f"/api/addresses/{address['id']}"
    clock.advance(1)  # events of one instant have no order
    await panel.patch(base, json={"display_name": "Ann"}, headers=headers)
    clock.advance(1)  # events of one instant have no order
    await panel.post(f"{base}/password", json={"password": "another long one"}, headers=headers)
    clock.advance(1)  # events of one instant have no order
    await panel.post(f"{base}/recovery", json={"recovery_email": "a@b.example"}, headers=headers)
    # A refused change writes nothing.
    bad = await panel.patch(base, json={"quota_bytes": -1}, headers=headers)
    assert bad.status == 400
    clock.advance(1)  # events of one instant have no order
    await panel.delete(base, headers=headers)
    clock.advance(1)  # events of one instant have no order
    await panel.delete(f"/api/domains/{domain['id']}", headers=headers)
    rows = await runtime.db.fetch_all(
        "SELECT type, payload FROM mta.events WHERE account_id = %s ORDER BY created_at, id",
        (account.id,),
    )
    assert [r["type"] for r in rows] == [
        "domain.created",
        "address.created",
        "address.updated",
        "address.updated",
        "address.deleted",
        "domain.deleted",
    ]
    created = rows[1]["payload"]
    assert created["type"] == "address.created" and created["created_at"].endswith("Z")
    assert created["data"]["email"] == "ann@events.example"
    assert created["data"]["domain_id"] == domain["id"]
    assert rows[3]["payload"]["data"]["display_name"] == "Ann"
    assert rows[0]["payload"]["data"] == {
        "id": domain["id"],
        "name": "events.example",
        "status": "unchecked",
        "created_at": rows[0]["payload"]["data"]["created_at"],
    }


async def test_a_deleted_endpoint_stops_its_retries(panel, runtime, receiver, clock):
    got, url = receiver
    _, headers = await signed_in(runtime)
    hook = await make_hook(panel, headers, url, events=["domain.created"])
    got.answers = [500]
    await add_domain(panel, headers, "gone.example")
    await deliver_all(panel)
    assert len(got.received) == 1
    assert (await panel.delete(f"/api/webhooks/{hook['id']}", headers=headers)).status == 204
    clock.advance(RETRY_DELAYS[0])
    await runtime.jobs.run_due()
    assert len(got.received) == 1
    dead = await runtime.db.fetch_val("SELECT count(*) FROM common.jobs WHERE state = 'dead'")
    assert dead == 0


async def test_only_an_excerpt_of_the_answer_is_kept(panel, runtime, receiver):
    got, url = receiver
    _, headers = await signed_in(runtime)
    hook = await make_hook(panel, headers, url, events=["domain.created"])
    got.text = "x" * 50_000
    tested = await (
        await panel.post(f"/api/webhooks/{hook['id']}/test", json={}, headers=headers)
    ).json()
    assert tested["ok"] and tested["response"] == "x" * 1000
    await add_domain(panel, headers, "long.example")
    await deliver_all(panel)
    [event] = (await (await panel.get("/api/webhooks/events", headers=headers)).json())["data"]
    one = await (
        await panel.get(f"/api/webhooks/{hook['id']}/events/{event['id']}", headers=headers)
    ).json()
    assert one["attempts"][0]["response"] == "x" * 1000


async def test_received_mail_reaches_the_endpoint_as_email_received(panel, runtime, receiver):
    from mail.directory import lookup_recipient
    from mta.context import MtaContext
    from mta.delivery import Inbound, deliver
    from mta.settings import MtaSettings

    got, url = receiver
    _, headers = await signed_in(runtime)
    hook = await make_hook(panel, headers, url, events=["email.received"])
    domain = await add_domain(panel, headers, "inbox.example")
    resp = await panel.post(
        f"/api/domains/{domain['id']}/addresses",
        json={"local_part": "ann", "password": "a long mailbox password"},
        headers=headers,
    )
    assert resp.status == 201
    async with runtime.db.connection() as conn:
        found = await lookup_recipient(conn, "ann", "inbox.example")
    assert found.mailbox is not None
    mta = MtaContext.build(runtime, MtaSettings(smtp_hostname="mx.test", auth_checks=False))
    raw = (
        b"From: Bo <bo@sender.example>\r\nTo: ann@inbox.example\r\n"
        b"Subject: Hello Ann\r\nMessage-ID: <hello@sender.example>\r\n\r\nHi.\r\n"
    )
    report = await deliver(
        mta,
        Inbound(raw, "bo@sender.example", [("ann@inbox.example", found.mailbox)], "192.0.2.1", "x"),
    )
    [email_id] = report.email_ids.values()
    await deliver_all(panel)
    [request] = got.received
    payload = verified(hook["secret"], *request)
    assert payload["type"] == "email.received"
    assert payload["data"]["email_id"] == email_id
    assert payload["data"]["from"] == "Bo <bo@sender.example>"
    assert payload["data"]["to"] == ["ann@inbox.example"]
    assert payload["data"]["subject"] == "Hello Ann"


async def test_finished_deliveries_are_kept_30_days_and_unfinished_ones_until_they_end(
    panel, runtime, receiver, clock
):
    _, url = receiver
    _, headers = await signed_in(runtime)
    await make_hook(panel, headers, url, events=["domain.created"])
    await add_domain(panel, headers, "kept.example")
    await add_domain(panel, headers, "still.example")
    await deliver_all(panel)
    events = await (await panel.get("/api/webhooks/events", headers=headers)).json()
    assert [e["status"] for e in events["data"]] == ["delivered", "delivered"]
    # One of them still retrying (an endpoint down for a long time): never swept.
    await runtime.db.execute(
        "UPDATE mail.webhook_deliveries SET status = 'retrying' WHERE event_id = %s",
        (events["data"][0]["id"],),
    )
    clock.advance(days=29)
    await mail_ctx(panel).runtime.jobs.run_due()
    kept = "SELECT array_agg(event_id::text) FROM mail.webhook_deliveries"
    assert sorted(await runtime.db.fetch_val(kept)) == sorted(e["id"] for e in events["data"])
    clock.advance(days=2)
    await mail_ctx(panel).runtime.jobs.run_due()
    assert await runtime.db.fetch_val(kept) == [events["data"][0]["id"]]
    attempts = await runtime.db.fetch_val("SELECT count(*) FROM mail.webhook_attempts")
    assert attempts == 1  # the swept delivery's attempt went with it
