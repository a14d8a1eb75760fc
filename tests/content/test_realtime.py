"""The realtime socket, through a real WebSocket client (`websockets`) on real sockets."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from common.clock import Clock
from content.realtime.service import QUEUE_LIMIT, Client
from tests.content.factories import make_delivery_key, make_type, make_user

WAIT = 10.0


def ws_url(base: str, ticket: str) -> str:
    return base.replace("http://", "ws://", 1) + f"/realtime?ticket={ticket}"


async def session_ticket(cms: Any, headers: dict[str, str]) -> str:
    resp = await cms.post("/api/realtime/ticket", headers=headers)
    assert resp.status == 201, await resp.text()
    body = await resp.json()
    assert body["url"].startswith("ws://") and body["url"].endswith(body["ticket"])
    return str(body["ticket"])


async def key_ticket(cms: Any, key: str) -> str:
    resp = await cms.post("/realtime/delivery/ticket", headers={"X-Api-Key": key})
    assert resp.status == 201, await resp.text()
    return str((await resp.json())["ticket"])


async def frame(ws: ClientConnection) -> dict[str, Any]:
    return dict(json.loads(await asyncio.wait_for(ws.recv(), WAIT)))


async def open_socket(base: str, ticket: str) -> ClientConnection:
    ws = await connect(ws_url(base, ticket))
    assert (await frame(ws))["type"] == "ready"
    return ws


async def subscribe(ws: ClientConnection, topic: str) -> dict[str, Any]:
    await ws.send(json.dumps({"action": "subscribe", "topic": topic}))
    return await frame(ws)


async def nothing_pending(ws: ClientConnection) -> None:
    """A ping answered by the very next frame: nothing else was queued before it."""
    await ws.send(json.dumps({"action": "ping"}))
    assert await frame(ws) == {"type": "pong"}


def base(cms: Any) -> str:
    return str(cms.make_url("")).rstrip("/")


@pytest.fixture
async def post_type(runtime: Any, clock: Any) -> None:
    await make_type(runtime.db, clock, "post", [{"key": "body", "type": "markdown"}])
    await make_type(runtime.db, clock, "page", [{"key": "body", "type": "markdown"}])


async def test_a_ticket_is_single_use_and_lives_30_seconds(cms, team, clock, runtime) -> None:
    ticket = await session_ticket(cms, team["viewer"].headers)
    ws = await open_socket(base(cms), ticket)
    await ws.close()
    with pytest.raises(InvalidStatus) as reused:
        await connect(ws_url(base(cms), ticket))
    assert reused.value.response.status_code == 401
    assert json.loads(reused.value.response.body or b"{}")["code"] == "TICKET_INVALID"

    late = await session_ticket(cms, team["viewer"].headers)
    clock.advance(seconds=30)
    with pytest.raises(InvalidStatus) as expired:
        await connect(ws_url(base(cms), late))
    assert expired.value.response.status_code == 401

    key = await make_delivery_key(runtime.db, clock, ["*"])
    fresh = await key_ticket(cms, key)
    clock.advance(seconds=29)
    ws = await open_socket(base(cms), fresh)
    await ws.close()
    with pytest.raises(InvalidStatus):
        await connect(ws_url(base(cms), "rtk_made-up"))


async def test_ticket_routes_take_only_their_credential(cms, team, runtime, clock) -> None:
    key = await make_delivery_key(runtime.db, clock, ["*"])
    assert (await cms.post("/api/realtime/ticket", headers={"X-Api-Key": key})).status == 401
    assert (
        await cms.post("/realtime/delivery/ticket", headers=team["owner"].headers)
    ).status == 401
    assert (await cms.post("/realtime/delivery/ticket")).status == 401
    plain = await cms.get("/realtime?ticket=rtk_x")  # no Upgrade: a clear 400, ticket unspent
    assert plain.status == 400 and (await plain.json())["code"] == "NOT_WEBSOCKET"


async def test_each_topic_is_open_to_whom_the_spec_says(cms, team, runtime, clock, post_type):
    entry = await (
        await cms.post(
            "/api/entries", json={"type": "post", "title": "Hello"}, headers=team["editor"].headers
        )
    ).json()
    scoped = await make_delivery_key(runtime.db, clock, ["post"])
    site = await open_socket(base(cms), await key_ticket(cms, scoped))
    assert await subscribe(site, "site") == {"type": "subscribed", "topic": "site"}
    assert await subscribe(site, "content:post") == {"type": "subscribed", "topic": "content:post"}
    refused = await subscribe(site, "content:page")
    assert refused["type"] == "error" and refused["code"] == "FORBIDDEN"
    refused = await subscribe(site, f"entry:{entry['id']}")
    assert refused["type"] == "error" and refused["code"] == "FORBIDDEN"
    await site.close()

    viewer = await open_socket(base(cms), await session_ticket(cms, team["viewer"].headers))
    for topic in ("site", "content:page"):
        assert (await subscribe(viewer, topic))["type"] == "subscribed"
    assert await subscribe(viewer, f"entry:{entry['id']}") == {
        "type": "subscribed",
        "topic": f"entry:{entry['id']}",
    }
    presence = await frame(viewer)
    assert presence["event"] == "presence"
    assert presence["data"]["viewers"] == [{"id": team["viewer"].id, "name": "Viewer"}]
    assert (await subscribe(viewer, "entry:nope"))["code"] == "NOT_FOUND"
    assert (await subscribe(viewer, "weather"))["code"] == "UNKNOWN_TOPIC"
    await viewer.close()


async def test_events_name_the_entry_and_a_key_hears_only_what_it_can_read(
    cms, team, runtime, clock, post_type
) -> None:
    editor = team["editor"].headers
    scoped = await make_delivery_key(runtime.db, clock, ["post"])
    site = await open_socket(base(cms), await key_ticket(cms, scoped))
    await subscribe(site, "site")
    await subscribe(site, "content:post")
    person = await open_socket(base(cms), await session_ticket(cms, team["viewer"].headers))
    await subscribe(person, "site")

    entry = await (
        await cms.post(
            "/api/entries",
            json={"type": "post", "title": "Hello", "data": {"body": "secret draft"}},
            headers=editor,
        )
    ).json()
    data = {"id": entry["id"], "slug": entry["slug"], "type": "post"}
    assert await frame(person) == {"topic": "site", "event": "entry.created", "data": data}
    await nothing_pending(site)  # a draft is not the website's business

    url = f"/api/entries/{entry['id']}"
    assert (await cms.patch(url, json={"status": "published"}, headers=editor)).status == 200
    first, second = await frame(site), await frame(site)
    assert {first["topic"], second["topic"]} == {"site", "content:post"}
    assert first["event"] == second["event"] == "entry.published"
    assert first["data"] == data  # the names of the entry, never its content
    assert (await frame(person))["event"] == "entry.published"

    assert (await cms.patch(url, json={"status": "unpublished"}, headers=editor)).status == 200
    assert (await frame(site))["event"] == "entry.unpublished"
    await frame(site)
    assert (await cms.patch(url, json={"status": "published"}, headers=editor)).status == 200
    await frame(site), await frame(site)
    assert (await cms.delete(url, headers=editor)).status in (200, 204)
    deleted = await frame(site)
    assert deleted == {"topic": deleted["topic"], "event": "entry.deleted", "data": data}
    await frame(site)

    page = await (
        await cms.post(
            "/api/entries",
            json={"type": "page", "title": "About", "status": "published"},
            headers=editor,
        )
    ).json()
    assert page["status"] == "published"
    await nothing_pending(site)  # out of the key's scopes, even on the site topic
    await site.close()
    await person.close()


async def test_a_revoked_key_gets_no_more_topics_or_events(cms, team, runtime, clock, post_type):
    key = await make_delivery_key(runtime.db, clock, ["*"])
    site = await open_socket(base(cms), await key_ticket(cms, key))
    await subscribe(site, "site")
    await runtime.db.execute("UPDATE content.delivery_keys SET revoked_at = now()")
    refused = await subscribe(site, "content:post")
    assert refused["type"] == "error" and refused["code"] == "CREDENTIAL_REVOKED"
    resp = await cms.post(
        "/api/entries",
        json={"type": "post", "title": "Live", "status": "published"},
        headers=team["editor"].headers,
    )
    assert resp.status == 201
    await nothing_pending(site)
    await site.close()


async def test_ping_pong_and_bad_frames_answer_with_errors_not_a_drop(cms, team) -> None:
    ws = await open_socket(base(cms), await session_ticket(cms, team["viewer"].headers))
    await nothing_pending(ws)
    for bad in ("not json", "[1, 2]", '{"action": "dance"}', '{"action": "subscribe"}', "{}"):
        await ws.send(bad)
        answer = await frame(ws)
        assert answer["type"] == "error" and answer["code"] == "BAD_FRAME", bad
    await ws.send(b"\x00\x01")
    assert (await frame(ws))["code"] == "BAD_FRAME"
    await nothing_pending(ws)  # still open and answering
    await ws.close()


async def test_an_oversized_frame_closes_the_socket(cms, team) -> None:
    ws = await open_socket(base(cms), await session_ticket(cms, team["viewer"].headers))
    await ws.send(json.dumps({"action": "ping", "pad": "x" * 10_000}))
    with pytest.raises(ConnectionClosed):
        await frame(ws)
    assert ws.close_code == 1009


async def test_presence_shows_who_else_is_viewing(cms, team, post_type) -> None:
    entry = await (
        await cms.post(
            "/api/entries", json={"type": "post", "title": "Hi"}, headers=team["editor"].headers
        )
    ).json()
    topic = f"entry:{entry['id']}"
    one = await open_socket(base(cms), await session_ticket(cms, team["viewer"].headers))
    await subscribe(one, topic)
    assert len((await frame(one))["data"]["viewers"]) == 1
    two = await open_socket(base(cms), await session_ticket(cms, team["author"].headers))
    await subscribe(two, topic)
    both = {v["id"] for v in (await frame(two))["data"]["viewers"]}
    assert both == {team["viewer"].id, team["author"].id}
    assert {v["id"] for v in (await frame(one))["data"]["viewers"]} == both
    await two.close()
    left = await frame(one)
    assert [v["id"] for v in left["data"]["viewers"]] == [team["viewer"].id]
    await one.close()


def test_a_slow_client_is_dropped_not_buffered_without_bound() -> None:
    client = Client(kind="session")
    for n in range(QUEUE_LIMIT):
        client.send({"n": n})
    assert client.queue.qsize() == QUEUE_LIMIT and not client.dropped
    client.send({"n": "one too many"})
    # Its backlog is freed at once; the writer closes the socket (1013) on the marker.
    assert client.dropped and client.queue.qsize() == 1 and client.queue.get_nowait() is None
    client.send({"n": "later"})
    assert client.queue.empty()


async def test_events_and_presence_reach_sockets_on_every_gateway_process(
    gateway_process, database_url, db
) -> None:
    """Two real `python -m gateway` processes on one database: a write on one, heard on both."""
    real = Clock()
    await make_type(db, real, "post", [{"key": "body", "type": "markdown"}])
    editor = await make_user(db, real, "editor")
    viewer = await make_user(db, real, "viewer", name="Vera")
    key = await make_delivery_key(db, real, ["post"])
    env = {"DATABASE_URL": database_url}
    one, two = gateway_process(env=env), gateway_process(env=env)

    async with aiohttp.ClientSession() as http:

        async def call(gw: Any, method: str, path: str, **kw: Any) -> dict[str, Any]:
            async with http.request(method, gw.base_url + "/cms" + path, **kw) as resp:
                assert resp.status < 300, await resp.text()
                return dict(await resp.json())

        ticket = await call(one, "POST", "/realtime/delivery/ticket", headers={"X-Api-Key": key})
        # Under the gateway the socket is /cms/realtime, as the ticket's url says.
        assert ticket["url"].endswith("/cms/realtime?ticket=" + ticket["ticket"])
        site = await open_socket(one.base_url + "/cms", ticket["ticket"])
        await subscribe(site, "content:post")

        entry = await call(
            two, "POST", "/api/entries", json={"type": "post", "title": "x"}, headers=editor.headers
        )
        topic = f"entry:{entry['id']}"
        watchers = []
        for gw, person in ((one, editor), (two, viewer)):
            t = await call(gw, "POST", "/api/realtime/ticket", headers=person.headers)
            ws = await open_socket(gw.base_url + "/cms", t["ticket"])
            await subscribe(ws, topic)
            watchers.append(ws)
        # Presence is shared: the viewer on process two sees the editor on process one.
        while True:
            seen = await frame(watchers[1])
            if len(seen["data"]["viewers"]) == 2:
                break
        assert {v["name"] for v in seen["data"]["viewers"]} == {"Editor", "Vera"}

        await call(
            two,
            "PATCH",
            f"/api/entries/{entry['id']}",
            json={"status": "published"},
            headers=editor.headers,
        )
        told = await frame(site)  # written on process two, told on process one
        assert told == {
            "topic": "content:post",
            "event": "entry.published",
            "data": {"id": entry["id"], "slug": entry["slug"], "type": "post"},
        }
        for ws in watchers:
            while (got := await frame(ws))["event"] == "presence":
                pass
            assert got["event"] == "entry.published" and got["topic"] == topic
        for ws in (site, *watchers):
            await ws.close()
