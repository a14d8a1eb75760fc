"""JMAP over WebSocket (RFC 8887): requests by id, request errors, push of state changes."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from gateway.app import services_key
from tests.mta.conftest import send
from tests.mta.jmap.conftest import MAIL, Mailbox, Server, run


async def test_requests_errors_and_push_over_one_socket(
    jmap_server: Server, alice: Mailbox, smtp_port: int
) -> None:
    session = (
        await run(
            __import__("requests").get,
            f"{jmap_server.url}/.well-known/jmap",
            headers={"Authorization": alice.basic},
            timeout=10,
        )
    ).json()
    ws_url = session["capabilities"]["urn:ietf:params:jmap:websocket"]["url"]
    assert ws_url == f"ws://{jmap_server.host}/jmap/ws"
    async with aiohttp.ClientSession() as http:
        refused = await http.get(f"{jmap_server.url}/jmap/ws")
        assert refused.status == 401
        async with http.ws_connect(
            ws_url, protocols=("jmap",), headers={"Authorization": alice.basic}
        ) as ws:
            assert ws.protocol == "jmap"
            await ws.send_json(
                {
                    "@type": "Request",
                    "id": "r1",
                    "using": MAIL,
                    "methodCalls": [["Core/echo", {"x": 1}, "0"]],
                }
            )
            answer: dict[str, Any] = await ws.receive_json(timeout=10)
            assert answer["@type"] == "Response" and answer["requestId"] == "r1"
            assert answer["methodResponses"] == [["Core/echo", {"x": 1}, "0"]]
            await ws.send_str("{not json")
            error = await ws.receive_json(timeout=10)
            assert error["@type"] == "RequestError" and error["type"].endswith(":notJSON")
            await ws.send_json({"@type": "WebSocketPushEnable", "dataTypes": ["Email"]})
            hub = jmap_server.app[services_key]["jmap"].hub
            async with asyncio.timeout(10):
                await hub.listening(alice.address_id)
            message = (
                b"From: carol@remote.test\r\nTo: alice@example.test\r\nSubject: ws\r\n\r\nhi\r\n"
            )
            assert (await send(smtp_port, "carol@remote.test", [alice.email], message))["data"][
                0
            ] == 250
            change = await ws.receive_json(timeout=10)
            assert change["@type"] == "StateChange"
            assert list(change["changed"][alice.address_id]) == ["Email"]
