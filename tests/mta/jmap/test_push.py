"""Push: an EventSource event when mail arrives over SMTP; PushSubscription with verification."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import pytest
import requests
from aiohttp import ClientSession, web
from jmapc import EventSourceConfig
from jmapc.methods import MailboxGet

from common.settings import Settings
from gateway.app import build_app, services_key
from tests.mta.conftest import send
from tests.mta.jmap.conftest import MAIL, Mailbox, Server, run


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # The push endpoint in these tests listens on loopback, a private address.
    env = {**settings.environ, "JMAP_PUSH_ALLOW_PRIVATE": "true"}
    return replace(settings, environ=MappingProxyType(env))


MESSAGE = (
    b"From: Carol <carol@remote.test>\r\nTo: alice@example.test\r\nSubject: news\r\n"
    b"Message-ID: <push-1@remote.test>\r\n\r\nHello\r\n"
)


async def listening(server: Server, address_id: str) -> None:
    hub = server.app[services_key]["jmap"].hub
    async with asyncio.timeout(10):
        await hub.listening(address_id)


async def test_a_message_over_smtp_reaches_a_watching_client_through_push_and_changes(
    jmap_server: Server, alice: Mailbox, smtp_port: int
) -> None:
    client = jmap_server.client(
        alice.email, event_source_config=EventSourceConfig(types="Email,Mailbox,EmailDelivery")
    )
    before = await run(client.request, MailboxGet(ids=[]))
    waiting = asyncio.ensure_future(run(lambda: next(client.events)))
    await listening(jmap_server, alice.address_id)
    result = await send(smtp_port, "carol@remote.test", [alice.email], MESSAGE)
    assert result["data"][0] == 250
    event = await asyncio.wait_for(waiting, 10)
    changed = event.data.changed[alice.address_id]
    assert changed.email is not None and changed.email_delivery is not None
    assert changed.mailbox is not None and changed.thread is None  # not asked for
    # The pushed Mailbox state is the one /changes now reports, with the inbox in it.
    answer = await jmap_server.post(
        alice.basic,
        {
            "using": MAIL,
            "methodCalls": [
                [
                    "Mailbox/changes",
                    {"accountId": alice.address_id, "sinceState": before.state},
                    "0",
                ]
            ],
        },
    )
    changes = answer.json()["methodResponses"][0][1]
    assert changes["newState"] == changed.mailbox
    assert len(changes["updated"]) == 1
    # So is the pushed Email state: Email/changes from before names the new message.
    emails = await jmap_server.post(
        alice.basic,
        {
            "using": MAIL,
            "methodCalls": [
                ["Email/changes", {"accountId": alice.address_id, "sinceState": "0"}, "0"],
                [
                    "Email/get",
                    {
                        "accountId": alice.address_id,
                        "#ids": {"resultOf": "0", "name": "Email/changes", "path": "/created"},
                        "properties": ["subject"],
                    },
                    "1",
                ],
            ],
        },
    )
    email_changes, got = (r[1] for r in emails.json()["methodResponses"])
    assert email_changes["newState"] == changed.email
    assert [e["subject"] for e in got["list"]] == ["news"]


def read_events(url: str, auth: str, count: int) -> list[tuple[str, dict[str, Any]]]:
    out = []
    with requests.get(url, headers={"Authorization": auth}, stream=True, timeout=15) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        name = None
        for line in r.iter_lines(decode_unicode=True):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                out.append((name, json.loads(line[6:])))
                if len(out) == count:
                    break
    return out


async def test_ping_keeps_an_idle_stream_alive(jmap_server: Server, alice: Mailbox) -> None:
    # ping=1 is raised to the 5 s minimum (JMAP_MIN_PING_SECONDS): a real interval, not a clock rule.
    url = f"{jmap_server.url}/jmap/eventsource?types=*&closeafter=no&ping=1"
    events = await asyncio.wait_for(run(read_events, url, alice.basic, 1), 20)
    assert events == [("ping", {"interval": 5})]


async def test_closeafter_state_returns_after_one_change(
    jmap_server: Server, alice: Mailbox
) -> None:
    url = f"{jmap_server.url}/jmap/eventsource?types=Mailbox&closeafter=state&ping=0"

    def stream() -> bytes:
        with requests.get(
            url, headers={"Authorization": alice.basic}, stream=True, timeout=15
        ) as r:
            return r.raw.read()  # returns only when the server ends the response

    task = asyncio.ensure_future(run(stream))
    await listening(jmap_server, alice.address_id)
    await jmap_server.post(
        alice.basic,
        {
            "using": MAIL,
            "methodCalls": [
                [
                    "Mailbox/set",
                    {"accountId": alice.address_id, "create": {"a": {"name": "A"}}},
                    "0",
                ]
            ],
        },
    )
    body = await asyncio.wait_for(task, 10)
    assert body.startswith(b"event: state\ndata: ")
    data = json.loads(body.split(b"data: ", 1)[1])
    assert data["@type"] == "StateChange" and list(data["changed"][alice.address_id]) == ["Mailbox"]


async def test_push_subscription_is_verified_then_receives_state_changes(
    jmap_server: Server, alice: Mailbox, aiohttp_server: Any, smtp_port: int
) -> None:
    received: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

    async def endpoint(request: web.Request) -> web.Response:
        await received.put(await request.json())
        return web.Response(status=201)

    app = web.Application()
    app.router.add_post("/push", endpoint)
    target = await aiohttp_server(app)
    url = f"http://127.0.0.1:{target.port}/push"
    core = ["urn:ietf:params:jmap:core"]
    (created,) = (
        await jmap_server.post(
            alice.basic,
            {
                "using": core,
                "methodCalls": [
                    [
                        "PushSubscription/set",
                        {
                            "create": {
                                "s": {"deviceClientId": "phone", "url": url, "types": ["Email"]}
                            }
                        },
                        "0",
                    ]
                ],
            },
        )
    ).json()["methodResponses"]
    sub_id = created[1]["created"]["s"]["id"]
    verification = await asyncio.wait_for(received.get(), 10)
    assert (
        verification["@type"] == "PushVerification" and verification["pushSubscriptionId"] == sub_id
    )
    # Unverified: no state changes are pushed. A wrong code is refused.
    wrong = await jmap_server.post(
        alice.basic,
        {
            "using": core,
            "methodCalls": [
                ["PushSubscription/set", {"update": {sub_id: {"verificationCode": "nope"}}}, "0"]
            ],
        },
    )
    assert (
        wrong.json()["methodResponses"][0][1]["notUpdated"][sub_id]["type"] == "invalidProperties"
    )
    ok = await jmap_server.post(
        alice.basic,
        {
            "using": core,
            "methodCalls": [
                [
                    "PushSubscription/set",
                    {"update": {sub_id: {"verificationCode": verification["verificationCode"]}}},
                    "0",
                ],
                ["PushSubscription/get", {}, "1"],
            ],
        },
    )
    listed = ok.json()["methodResponses"][1][1]["list"]
    assert listed[0]["verificationCode"] == verification["verificationCode"]
    assert (await send(smtp_port, "carol@remote.test", [alice.email], MESSAGE))["data"][0] == 250
    change = await asyncio.wait_for(received.get(), 10)
    assert change["@type"] == "StateChange"
    assert list(change["changed"][alice.address_id]) == ["Email"]


async def test_a_graceful_stop_ends_open_streams_cleanly(
    runtime: Any, aiohttp_server: Any, alice: Mailbox
) -> None:
    """A gateway stopping (a deploy, a restart) ends its EventSource streams
    with a proper end, so clients reconnect to a process still serving; left
    open, a stream held the stop for its whole timeout and was then cut off."""
    server = await aiohttp_server(build_app(runtime))
    url = f"http://127.0.0.1:{server.port}/jmap/eventsource?types=*&closeafter=no&ping=0"
    async with ClientSession() as http:
        response = await http.get(url, headers={"Authorization": alice.basic})
        assert response.status == 200
        hub = server.app[services_key]["jmap"].hub
        async with asyncio.timeout(10):
            await hub.listening(alice.address_id)
        closing = asyncio.ensure_future(server.close())
        # Read to the end: a stream cut off by the stop's timeout raises here.
        body = await response.read()
        await closing
    assert body == b""  # nothing changed while it was open
