"""Content webhooks: management, and signed deliveries received by a real local HTTP server.

Signatures are checked with the `standardwebhooks` package (the scheme's own
reference library), not with our signing code. Its verifier compares the
webhook-timestamp with the wall clock, so this module's clock starts at now.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiohttp import web
from standardwebhooks.webhooks import Webhook as ReferenceVerifier
from standardwebhooks.webhooks import WebhookVerificationError

from common.clock import ManualClock
from common.settings import Settings
from content.webhooks import store as webhook_store
from content.webhooks.events import DELIVER_JOB
from tests.content.factories import make_delivery_key, make_type
from tests.content.test_realtime import (
    base,
    frame,
    key_ticket,
    nothing_pending,
    open_socket,
    session_ticket,
    subscribe,
)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(datetime.now(UTC).replace(microsecond=0))


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # The receiver listens on loopback; test_outbound.py shows the refusal without this.
    return dataclasses.replace(settings, environ={"WEBHOOK_ALLOW_PRIVATE": "true"})


class Receiver:
    """A real aiohttp server on 127.0.0.1 recording what it is sent."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        self.answers: list[int] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.received.append((request.path, dict(request.headers), await request.read()))
        status = self.answers.pop(0) if self.answers else 200
        if status == 302:
            raise web.HTTPFound("/elsewhere")
        return web.Response(status=status, text="ok")


@pytest.fixture
async def receiver(aiohttp_server: Any) -> tuple[Receiver, str]:
    r = Receiver()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", r.handle)
    server = await aiohttp_server(app)
    return r, str(server.make_url("/hook"))


async def _hook(cms: Any, headers: dict[str, str], url: str, **extra: Any) -> dict[str, Any]:
    resp = await cms.post(
        "/api/webhooks", json={"name": "site", "url": url, **extra}, headers=headers
    )
    assert resp.status == 201, await resp.text()
    return dict(await resp.json())


async def test_webhooks_are_managed_with_webhooks_manage_and_the_secret_shown_once(
    cms, team, receiver
) -> None:
    _, url = receiver
    editor = await cms.post(
        "/api/webhooks", json={"name": "x", "url": url}, headers=team["editor"].headers
    )
    assert editor.status == 403
    admin = team["admin"].headers
    created = await _hook(cms, admin, url, events=["entry.published"])
    assert created["secret"].startswith("whsec_") and created["events"] == ["entry.published"]
    listed = await (await cms.get("/api/webhooks", headers=admin)).json()
    assert listed["data"][0]["secretHint"] == created["secret"][:10]
    assert created["secret"] not in str(listed)
    one = await (await cms.get(f"/api/webhooks/{created['id']}", headers=admin)).json()
    assert "secret" not in one
    patched = await cms.patch(
        f"/api/webhooks/{created['id']}", json={"enabled": False, "name": "off"}, headers=admin
    )
    assert patched.status == 200 and (await patched.json())["enabled"] is False
    bad = await cms.post(
        "/api/webhooks", json={"name": "x", "url": "ftp://x", "events": ["nope"]}, headers=admin
    )
    assert bad.status == 400
    keys = {f["key"] for f in (await bad.json())["details"]["fields"]}
    assert keys == {"url", "events"}
    assert (await cms.delete(f"/api/webhooks/{created['id']}", headers=admin)).status == 204
    assert (await cms.get(f"/api/webhooks/{created['id']}", headers=admin)).status == 404


async def test_a_publish_is_delivered_signed_by_the_standard_webhooks_scheme(
    cms, team, receiver, runtime, clock
) -> None:
    got, url = receiver
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    hook = await _hook(cms, team["admin"].headers, url, events=["entry.published"])
    editor = team["editor"].headers
    entry = await (
        await cms.post(
            "/api/entries",
            json={"type": "post", "title": "Hi", "data": {"body": "private words"}},
            headers=editor,
        )
    ).json()
    await runtime.jobs.run_due()
    assert got.received == []  # entry.created is not among this webhook's events
    patch = await cms.patch(
        f"/api/entries/{entry['id']}", json={"status": "published"}, headers=editor
    )
    assert patch.status == 200
    await runtime.jobs.run_due()
    [(path, headers, body)] = got.received
    assert path == "/hook" and headers["Content-Type"] == "application/json"
    payload = ReferenceVerifier(hook["secret"]).verify(body, headers)
    assert payload["type"] == "entry.published"
    assert payload["data"] == {
        "id": entry["id"],
        "slug": entry["slug"],
        "type": "post",
        "status": "published",
    }
    assert b"private words" not in body
    with pytest.raises(WebhookVerificationError):  # another secret does not verify it
        ReferenceVerifier("whsec_" + "A" * 43 + "=").verify(body, headers)
    with pytest.raises(WebhookVerificationError):  # nor does a changed body
        ReferenceVerifier(hook["secret"]).verify(
            body.replace(b"published", b"unpublished"), headers
        )


async def test_failed_deliveries_are_retried_with_backoff_and_each_attempt_recorded(
    cms, team, receiver, runtime, clock
) -> None:
    got, url = receiver
    got.answers = [500, 302]
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    admin = team["admin"].headers
    hook = await _hook(cms, admin, url, events=["entry.published"])
    resp = await cms.post(
        "/api/entries", json={"type": "post", "title": "A", "status": "published"}, headers=admin
    )
    assert resp.status == 201
    await runtime.jobs.run_due()  # 500
    await runtime.jobs.run_due()
    assert len(got.received) == 1  # not yet again: backing off
    clock.advance(seconds=7)
    await runtime.jobs.run_due()  # 302: not followed
    assert [p for p, _, _ in got.received] == ["/hook", "/hook"]
    clock.advance(seconds=13)
    await runtime.jobs.run_due()  # 200
    assert len(got.received) == 3
    ids = {h["webhook-id"] for _, h, _ in got.received}
    assert len(ids) == 1  # one message, the same id on every try
    stamps = [int(h["webhook-timestamp"]) for _, h, _ in got.received]
    assert stamps == sorted(stamps) and stamps[0] < stamps[-1]
    for _, headers, body in got.received:
        ReferenceVerifier(hook["secret"]).verify(body, headers)
    attempts = await (await cms.get(f"/api/webhooks/{hook['id']}/attempts", headers=admin)).json()
    summary = [(a["attempt"], a["status"], a["ok"]) for a in reversed(attempts["data"])]
    assert summary == [(1, 500, False), (2, 302, False), (3, 200, True)]
    assert "redirects are not followed" in attempts["data"][1]["error"]
    jobs = await runtime.db.fetch_all(
        "SELECT state FROM common.jobs WHERE kind = %s", (DELIVER_JOB,)
    )
    assert [j["state"] for j in jobs] == ["done"]


async def test_a_disabled_or_deleted_webhook_sends_nothing(cms, team, receiver, runtime, clock):
    got, url = receiver
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    admin = team["admin"].headers
    off = await _hook(cms, admin, url, enabled=False)
    gone = await _hook(cms, admin, url)
    await cms.post("/api/entries", json={"type": "post", "title": "A"}, headers=admin)
    assert (await cms.delete(f"/api/webhooks/{gone['id']}", headers=admin)).status == 204
    await runtime.jobs.run_due()
    assert got.received == [] and off["enabled"] is False


async def _heard(ws: Any) -> list[str]:
    """The events a socket subscribed to one topic heard, up to a ping's answer."""
    await ws.send('{"action": "ping"}')
    names = []
    while (got := await frame(ws)) != {"type": "pong"}:
        names.append(got["event"])
    return names


async def test_webhooks_and_the_socket_hear_the_same_events_for_every_way_an_entry_moves(
    cms, team, receiver, runtime, clock
) -> None:
    """One mapping (content/entries/events.py): the action, then the public event."""
    got, url = receiver
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    await _hook(cms, team["admin"].headers, url)  # every event
    person = await open_socket(base(cms), await session_ticket(cms, team["viewer"].headers))
    await subscribe(person, "site")
    key = await make_delivery_key(runtime.db, clock, ["post"])
    site = await open_socket(base(cms), await key_ticket(cms, key))
    await subscribe(site, "site")
    editor = team["editor"].headers

    async def step() -> tuple[list[str], list[str], list[str]]:
        await runtime.jobs.run_due()  # a publication job enqueues its deliveries...
        await runtime.jobs.run_due()  # ...which run next
        # Deliveries are separate jobs: their order is the queue's.
        sent = sorted(json.loads(b)["type"] for _, _, b in got.received)
        got.received.clear()
        return sent, sorted(await _heard(person)), await _heard(site)

    created = await cms.post(
        "/api/entries",
        json={"type": "post", "title": "Live", "status": "published"},
        headers=editor,
    )
    live = (await created.json())["id"]
    both = ["entry.created", "entry.published"]  # sorted
    assert await step() == (both, both, ["entry.published"])

    url_of = f"/api/entries/{live}"
    assert (await cms.patch(url_of, json={"title": "Edited"}, headers=editor)).status == 200
    edit = ["entry.published", "entry.updated"]
    assert await step() == (edit, edit, ["entry.published"])

    assert (await cms.patch(url_of, json={"status": "draft"}, headers=editor)).status == 200
    down = ["entry.drafted", "entry.unpublished"]  # sorted
    assert await step() == (down, down, ["entry.unpublished"])
    assert (await cms.patch(url_of, json={"title": "Quiet"}, headers=editor)).status == 200
    assert await step() == (["entry.updated"], ["entry.updated"], [])

    assert (await cms.patch(url_of, json={"status": "published"}, headers=editor)).status == 200
    assert await step() == (["entry.published"],) * 2 + (["entry.published"],)
    assert (await cms.patch(url_of, json={"status": "unpublished"}, headers=editor)).status == 200
    assert await step() == (["entry.unpublished"],) * 3

    at = clock.now() + timedelta(hours=1)
    draft = await (
        await cms.post(
            "/api/entries",
            json={"type": "post", "title": "Later", "publishAt": at.isoformat()},
            headers=editor,
        )
    ).json()
    assert await step() == (["entry.created"], ["entry.created"], [])
    clock.advance(hours=1)
    assert await step() == (["entry.published"],) * 3  # the publication job

    assert (await cms.delete(f"/api/entries/{draft['id']}", headers=editor)).status == 200
    assert await step() == (["entry.deleted"],) * 3
    restore = await cms.post(f"/api/trash/{draft['id']}/restore", headers=editor)
    assert restore.status == 200 and (await restore.json())["status"] == "draft"
    assert await step() == (["entry.restored"], ["entry.restored"], [])
    assert (await cms.delete(f"/api/entries/{draft['id']}", headers=editor)).status == 200
    assert await step() == (["entry.deleted"], ["entry.deleted"], [])  # a draft: not public
    assert (await cms.delete(f"/api/trash/{draft['id']}", headers=editor)).status == 204
    assert await step() == (["entry.purged"], ["entry.purged"], [])
    await nothing_pending(site)
    await person.close()
    await site.close()


async def test_a_webhooks_attempts_are_paged_newest_first_with_their_total(
    cms, team, receiver, runtime, clock
) -> None:
    """A busy webhook's attempts page as every list does (the admin's Last page reads the oldest)."""
    _, url = receiver
    admin = team["admin"].headers
    hook = await _hook(cms, admin, url, events=["entry.published"])
    async with runtime.db.connection() as conn:
        for n in range(1, 46):
            await webhook_store.record_attempt(
                conn,
                hook["id"],
                message_id=f"msg-{n}",
                event="entry.published",
                attempt=1,
                at=clock.now(),
                status=200,
                ok=True,
                error="",
                duration_ms=n,
            )
    path = f"/api/webhooks/{hook['id']}/attempts"
    first = await (await cms.get(path, headers=admin)).json()
    assert first["meta"] == {"total": 45, "page": 1, "limit": 20}
    assert [a["durationMs"] for a in first["data"]][:2] == [45, 44]
    last = await (await cms.get(path + "?page=3&limit=20", headers=admin)).json()
    assert [a["durationMs"] for a in last["data"]] == [5, 4, 3, 2, 1]
    too_many = await cms.get(path + "?limit=101", headers=admin)
    assert too_many.status == 400
    assert (await too_many.json())["details"]["fields"][0]["key"] == "limit"
