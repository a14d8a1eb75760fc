"""Session discovery, Core/echo, request and method errors, back-references (RFC 8620 2-3)."""

from __future__ import annotations

from typing import Any

import jmapc
from jmapc.methods import CoreEcho, MailboxGet, MailboxQuery
from jmapc.models import MailboxQueryFilterCondition

from tests.mta.jmap.conftest import MAIL, Mailbox, Server, run


async def test_jmapc_discovers_the_session_and_reads_the_default_mailboxes(
    jmap_server: Server, alice: Mailbox
) -> None:
    client = jmap_server.client(alice.email)
    session = await run(lambda: client.jmap_session)
    assert session.username == alice.email
    assert session.api_url == f"{jmap_server.url}/jmap"
    assert session.capabilities.core.max_calls_in_request == 16
    assert client.account_id == alice.address_id
    result = await run(client.request, MailboxGet(ids=None))
    roles = {m.role: m.name for m in result.data}
    assert roles == {
        "inbox": "Inbox",
        "drafts": "Drafts",
        "sent": "Sent",
        "archive": "Archive",
        "junk": "Junk",
        "trash": "Trash",
    }
    inbox = next(m for m in result.data if m.role == "inbox")
    assert inbox.total_emails == 0 and inbox.unread_threads == 0


async def test_core_echo_returns_its_arguments(jmap_server: Server, alice: Mailbox) -> None:
    client = jmap_server.client(alice.email)
    echoed = await run(client.request, CoreEcho(data={"hello": [1, "two", None]}))
    assert echoed.data == {"hello": [1, "two", None]}


async def test_back_reference_feeds_query_ids_into_get(jmap_server: Server, alice: Mailbox) -> None:
    client = jmap_server.client(alice.email)
    results = await run(
        client.request,
        [
            MailboxQuery(filter=MailboxQueryFilterCondition(role="inbox")),
            MailboxGet(ids=jmapc.Ref("/ids")),
        ],
    )
    assert [m.role for m in results[1].response.data] == ["inbox"]


async def test_request_level_errors_are_problem_details(
    jmap_server: Server, alice: Mailbox
) -> None:
    import requests

    def raw(data: bytes, content_type: str = "application/json") -> Any:
        return requests.post(
            f"{jmap_server.url}/jmap",
            data=data,
            headers={"Authorization": alice.basic, "Content-Type": content_type},
            timeout=10,
        )

    not_json = await run(raw, b"{nope")
    assert not_json.status_code == 400
    assert not_json.headers["Content-Type"].startswith("application/problem+json")
    assert not_json.json()["type"] == "urn:ietf:params:jmap:error:notJSON"
    not_request = await jmap_server.post(alice.basic, {"using": MAIL})
    assert not_request.json()["type"] == "urn:ietf:params:jmap:error:notRequest"
    unknown = await jmap_server.post(
        alice.basic, {"using": [*MAIL, "urn:example:nope"], "methodCalls": []}
    )
    assert unknown.json()["type"] == "urn:ietf:params:jmap:error:unknownCapability"
    calls = [["Core/echo", {}, str(i)] for i in range(17)]
    limit = await jmap_server.post(alice.basic, {"using": MAIL, "methodCalls": calls})
    assert limit.status_code == 400
    assert limit.json()["type"] == "urn:ietf:params:jmap:error:limit"
    assert limit.json()["limit"] == "maxCallsInRequest"
    big = await run(
        raw, b'{"using": [], "methodCalls": [], "x": "' + b"a" * (10 * 1024 * 1024) + b'"}'
    )
    assert big.json()["limit"] == "maxSizeRequest"


async def test_method_level_errors(jmap_server: Server, alice: Mailbox) -> None:
    calls = [
        ["Nope/get", {}, "a"],
        ["Mailbox/get", {"accountId": "not-mine"}, "b"],
        ["Mailbox/get", {"accountId": alice.address_id, "ids": ["x"] * 501}, "c"],
        [
            "Mailbox/get",
            {
                "accountId": alice.address_id,
                "#ids": {"resultOf": "zz", "name": "Mailbox/query", "path": "/ids"},
            },
            "d",
        ],
        ["Mailbox/get", {"accountId": alice.address_id, "properties": ["bogus"]}, "e"],
        ["Mailbox/changes", {"accountId": alice.address_id, "sinceState": "banana"}, "f"],
        ["Mailbox/query", {"accountId": alice.address_id, "sort": [{"property": "size"}]}, "g"],
        ["Mailbox/query", {"accountId": alice.address_id, "filter": {"colour": "red"}}, "h"],
        ["Mailbox/set", {"accountId": alice.address_id, "ifInState": "999999"}, "i"],
    ]
    body = (await jmap_server.post(alice.basic, {"using": MAIL, "methodCalls": calls})).json()
    types = {r[2]: r[1]["type"] for r in body["methodResponses"]}
    assert types == {
        "a": "unknownMethod",
        "b": "accountNotFound",
        "c": "requestTooLarge",
        "d": "invalidResultReference",
        "e": "invalidArguments",
        "f": "cannotCalculateChanges",
        "g": "unsupportedSort",
        "h": "unsupportedFilter",
        "i": "stateMismatch",
    }
    # A method whose capability the request did not name is unknown too.
    only_core = await jmap_server.post(
        alice.basic,
        {
            "using": ["urn:ietf:params:jmap:core"],
            "methodCalls": [["Mailbox/get", {"accountId": alice.address_id}, "0"]],
        },
    )
    assert only_core.json()["methodResponses"][0][1]["type"] == "unknownMethod"
    # With nothing in using, not even Core/echo may be called.
    nothing = await jmap_server.post(
        alice.basic, {"using": [], "methodCalls": [["Core/echo", {}, "0"]]}
    )
    assert nothing.json()["methodResponses"][0][1]["type"] == "unknownMethod"


async def test_result_reference_paths_with_star_and_created_ids(
    jmap_server: Server, alice: Mailbox
) -> None:
    a = alice.address_id
    calls = [
        [
            "Mailbox/set",
            {
                "accountId": a,
                "create": {"k1": {"name": "Lists"}, "k2": {"name": "python", "parentId": "#k1"}},
            },
            "0",
        ],
        ["Mailbox/get", {"accountId": a, "ids": ["#k2"], "properties": ["name", "parentId"]}, "1"],
        [
            "Mailbox/get",
            {
                "accountId": a,
                "#ids": {"resultOf": "1", "name": "Mailbox/get", "path": "/list/*/parentId"},
            },
            "2",
        ],
    ]
    body = (
        await jmap_server.post(alice.basic, {"using": MAIL, "methodCalls": calls, "createdIds": {}})
    ).json()
    created = body["methodResponses"][0][1]["created"]
    assert set(body["createdIds"]) == {"k1", "k2"}
    child = body["methodResponses"][1][1]["list"][0]
    assert child["name"] == "python" and child["parentId"] == created["k1"]["id"]
    assert [m["name"] for m in body["methodResponses"][2][1]["list"]] == ["Lists"]
