"""Mailbox/set, /changes, /query, /queryChanges; Thread/get; states move exactly with data."""

from __future__ import annotations

from typing import Any

from jmapc.methods import MailboxChanges, MailboxGet, MailboxSet
from jmapc.models import Mailbox as JMailbox

from tests.mta.conftest import send
from tests.mta.jmap.conftest import MAIL, Mailbox, Server, run


async def call(server: Server, who: Mailbox, *calls: list[Any]) -> list[Any]:
    body = (await server.post(who.basic, {"using": MAIL, "methodCalls": list(calls)})).json()
    return [r[1] for r in body["methodResponses"]]


def message(subject: str, msgid: str, reply_to: str | None = None) -> bytes:
    head = f"From: Carol <carol@remote.test>\r\nTo: alice@example.test\r\nSubject: {subject}\r\nMessage-ID: <{msgid}>\r\n"
    if reply_to:
        head += f"In-Reply-To: <{reply_to}>\r\n"
    return (head + "\r\nHello\r\n").encode()


async def test_create_rename_move_and_destroy_with_jmapc(
    jmap_server: Server, alice: Mailbox
) -> None:
    client = jmap_server.client(alice.email)
    before = await run(client.request, MailboxGet(ids=[]))
    made = await run(
        client.request, MailboxSet(create={"a": JMailbox(name="Receipts", sort_order=5)})
    )
    new_id = made.created["a"].id
    assert made.old_state == before.state and made.new_state != before.state
    again = await run(client.request, MailboxGet(ids=[]))
    assert again.state == made.new_state
    # Reading changes nothing: the state stays.
    assert (await run(client.request, MailboxGet(ids=None))).state == made.new_state
    changes = await run(client.request, MailboxChanges(since_state=before.state))
    assert changes.created == [new_id] and changes.updated == [] and changes.destroyed == []
    renamed = await run(client.request, MailboxSet(update={new_id: {"name": "Bills"}}))
    assert renamed.updated == {new_id: None}
    after = await run(client.request, MailboxChanges(since_state=made.new_state))
    assert after.updated == [new_id]
    gone = await run(client.request, MailboxSet(destroy=[new_id]))
    assert gone.destroyed == [new_id]
    # Created and destroyed since "before": the client never needs to hear of it.
    span = await run(client.request, MailboxChanges(since_state=before.state))
    assert (span.created, span.updated, span.destroyed) == ([], [], [])


async def test_set_refusals(jmap_server: Server, alice: Mailbox, smtp_port: int) -> None:
    a = alice.address_id
    (got,) = await call(
        jmap_server, alice, ["Mailbox/get", {"accountId": a, "properties": ["role"]}, "0"]
    )
    inbox = next(m["id"] for m in got["list"] if m["role"] == "inbox")
    (made,) = await call(
        jmap_server,
        alice,
        ["Mailbox/set", {"accountId": a, "create": {"p": {"name": "Parent"}}}, "0"],
    )
    parent = made["created"]["p"]["id"]
    (result,) = await call(
        jmap_server,
        alice,
        [
            "Mailbox/set",
            {
                "accountId": a,
                "create": {
                    "dup": {"name": "inbox"},
                    "role": {"name": "Second inbox", "role": "inbox"},
                    "badrole": {"name": "X", "role": "important"},
                    "orphan": {"name": "Y", "parentId": "no-such-id"},
                    "child": {"name": "Child", "parentId": parent},
                    "counts": {"name": "Z", "totalEmails": 3},
                },
                "update": {parent: {"parentId": "#child"}},
                "destroy": ["no-such-id"],
            },
            "0",
        ],
    )
    errors = {k: (v["type"], v.get("properties")) for k, v in result["notCreated"].items()}
    assert result["notCreated"]["dup"]["existingId"] == inbox
    assert errors == {
        "dup": ("alreadyExists", None),
        "role": ("invalidProperties", ["role"]),
        "badrole": ("invalidProperties", ["role"]),
        "orphan": ("invalidProperties", ["parentId"]),
        "counts": ("invalidProperties", ["totalEmails"]),
    }
    assert result["notUpdated"][parent]["properties"] == ["parentId"]  # a cycle
    assert result["notDestroyed"] == {"no-such-id": {"type": "notFound"}}
    (has_child,) = await call(
        jmap_server, alice, ["Mailbox/set", {"accountId": a, "destroy": [parent]}, "0"]
    )
    assert has_child["notDestroyed"][parent]["type"] == "mailboxHasChild"
    assert (await send(smtp_port, "carol@remote.test", [alice.email], message("x", "m1@r")))[
        "data"
    ][0] == 250
    (has_mail,) = await call(
        jmap_server, alice, ["Mailbox/set", {"accountId": a, "destroy": [inbox]}, "0"]
    )
    assert has_mail["notDestroyed"][inbox]["type"] == "mailboxHasEmail"


async def test_destroy_with_its_emails_updates_counts_threads_and_states(
    jmap_server: Server, alice: Mailbox, smtp_port: int, db: Any
) -> None:
    a = alice.address_id
    assert (await send(smtp_port, "carol@remote.test", [alice.email], message("one", "t1@r")))[
        "data"
    ][0] == 250
    assert (
        await send(
            smtp_port, "carol@remote.test", [alice.email], message("re: one", "t2@r", "t1@r")
        )
    )["data"][0] == 250
    assert (await send(smtp_port, "carol@remote.test", [alice.email], message("two", "u1@r")))[
        "data"
    ][0] == 250
    got, threads = await call(
        jmap_server,
        alice,
        [
            "Mailbox/get",
            {
                "accountId": a,
                "properties": [
                    "role",
                    "totalEmails",
                    "unreadEmails",
                    "totalThreads",
                    "unreadThreads",
                ],
            },
            "0",
        ],
        [
            "Thread/get",
            {
                "accountId": a,
                "ids": [
                    str(t)
                    for t in await db.fetch_val(
                        "SELECT array_agg(DISTINCT thread_id::text) FROM mta.emails WHERE address_id = %s",
                        (a,),
                    )
                ],
            },
            "1",
        ],
    )
    inbox = next(m for m in got["list"] if m["role"] == "inbox")
    assert (
        inbox["totalEmails"],
        inbox["unreadEmails"],
        inbox["totalThreads"],
        inbox["unreadThreads"],
    ) == (3, 3, 2, 2)
    assert sorted(len(t["emailIds"]) for t in threads["list"]) == [1, 2]
    states = await call(
        jmap_server,
        alice,
        ["Thread/changes", {"accountId": a, "sinceState": "0"}, "0"],
    )
    assert len(states[0]["created"]) == 2
    thread_state = states[0]["newState"]
    (gone,) = await call(
        jmap_server,
        alice,
        [
            "Mailbox/set",
            {"accountId": a, "destroy": [inbox["id"]], "onDestroyRemoveEmails": True},
            "0",
        ],
    )
    assert gone["destroyed"] == [inbox["id"]]
    assert await db.fetch_val("SELECT count(*) FROM mta.emails WHERE address_id = %s", (a,)) == 0
    assert (
        await db.fetch_val("SELECT used_bytes FROM mta.quota_usage WHERE address_id = %s", (a,))
        == 0
    )
    (thread_changes,) = await call(
        jmap_server, alice, ["Thread/changes", {"accountId": a, "sinceState": thread_state}, "0"]
    )
    assert len(thread_changes["destroyed"]) == 2


async def test_query_sorts_filters_trees_and_query_changes(
    jmap_server: Server, alice: Mailbox
) -> None:
    a = alice.address_id
    (made,) = await call(
        jmap_server,
        alice,
        [
            "Mailbox/set",
            {
                "accountId": a,
                "create": {
                    "l": {"name": "Lists", "sortOrder": 1},
                    "p": {"name": "python", "parentId": "#l"},
                },
            },
            "0",
        ],
    )
    lists, python = made["created"]["l"]["id"], made["created"]["p"]["id"]
    q, tree, named, paged = await call(
        jmap_server,
        alice,
        [
            "Mailbox/query",
            {"accountId": a, "filter": {"hasAnyRole": False}, "sort": [{"property": "name"}]},
            "0",
        ],
        [
            "Mailbox/query",
            {
                "accountId": a,
                "sortAsTree": True,
                "sort": [{"property": "sortOrder"}, {"property": "name"}],
                "calculateTotal": True,
            },
            "1",
        ],
        [
            "Mailbox/query",
            {
                "accountId": a,
                "filter": {"operator": "OR", "conditions": [{"name": "pyth"}, {"role": "trash"}]},
            },
            "2",
        ],
        [
            "Mailbox/query",
            {
                "accountId": a,
                "sort": [{"property": "sortOrder"}],
                "anchor": lists,
                "anchorOffset": -1,
                "limit": 2,
            },
            "3",
        ],
    )
    assert q["ids"] == [lists, python]
    assert tree["total"] == 8 and tree["ids"].index(python) == tree["ids"].index(lists) + 1
    assert len(named["ids"]) == 2 and python in named["ids"]
    assert paged["ids"][1] == lists and len(paged["ids"]) == 2
    (renamed,) = await call(
        jmap_server,
        alice,
        ["Mailbox/set", {"accountId": a, "update": {python: {"name": "Zope"}}}, "0"],
    )
    (qc,) = await call(
        jmap_server,
        alice,
        [
            "Mailbox/queryChanges",
            {
                "accountId": a,
                "filter": {"hasAnyRole": False},
                "sort": [{"property": "name"}],
                "sinceQueryState": q["queryState"],
            },
            "0",
        ],
    )
    assert qc["newQueryState"] == renamed["newState"]
    assert qc["removed"] == [python] and qc["added"] == [{"id": python, "index": 1}]
    (stale,) = await call(
        jmap_server,
        alice,
        ["Mailbox/queryChanges", {"accountId": a, "sinceQueryState": "99999999"}, "0"],
    )
    assert stale["type"] == "cannotCalculateChanges"


async def test_pruned_history_answers_cannot_calculate_changes(
    jmap_server: Server, alice: Mailbox, db: Any, clock: Any
) -> None:
    from datetime import timedelta

    from mta.jmap.methods import prune_changes

    a = alice.address_id
    (first,) = await call(jmap_server, alice, ["Mailbox/get", {"accountId": a, "ids": []}, "0"])
    await call(
        jmap_server, alice, ["Mailbox/set", {"accountId": a, "create": {"x": {"name": "X"}}}, "0"]
    )
    (second,) = await call(jmap_server, alice, ["Mailbox/get", {"accountId": a, "ids": []}, "0"])
    clock.advance(days=31)
    await call(
        jmap_server, alice, ["Mailbox/set", {"accountId": a, "create": {"y": {"name": "Y"}}}, "0"]
    )
    async with db.connection() as conn:
        assert await prune_changes(conn, timedelta(days=30), clock.now()) > 0
    old, recent = await call(
        jmap_server,
        alice,
        ["Mailbox/changes", {"accountId": a, "sinceState": first["state"]}, "0"],
        ["Mailbox/changes", {"accountId": a, "sinceState": second["state"]}, "1"],
    )
    assert old["type"] == "cannotCalculateChanges"
    assert len(recent["created"]) == 1


async def test_max_changes_pages_through_history(jmap_server: Server, alice: Mailbox) -> None:
    a = alice.address_id
    (start,) = await call(jmap_server, alice, ["Mailbox/get", {"accountId": a, "ids": []}, "0"])
    await call(
        jmap_server,
        alice,
        [
            "Mailbox/set",
            {"accountId": a, "create": {str(i): {"name": f"F{i}"} for i in range(5)}},
            "0",
        ],
    )
    seen: list[str] = []
    state = start["state"]
    while True:
        (page,) = await call(
            jmap_server,
            alice,
            ["Mailbox/changes", {"accountId": a, "sinceState": state, "maxChanges": 2}, "0"],
        )
        assert len(page["created"]) <= 2
        seen += page["created"]
        state = page["newState"]
        if not page["hasMoreChanges"]:
            break
    assert len(seen) == 5 and len(set(seen)) == 5


async def test_thread_counts_follow_seen_and_moves(
    jmap_server: Server, alice: Mailbox, smtp_port: int
) -> None:
    a = alice.address_id
    for subject, msgid, parent in (
        ("a", "c1@r", None),
        ("re: a", "c2@r", "c1@r"),
        ("b", "d1@r", None),
    ):
        assert (
            await send(
                smtp_port, "carol@remote.test", [alice.email], message(subject, msgid, parent)
            )
        )["data"][0] == 250
    props = ["role", "totalEmails", "unreadEmails", "totalThreads", "unreadThreads"]

    async def inbox() -> dict[str, Any]:
        (got,) = await call(
            jmap_server, alice, ["Mailbox/get", {"accountId": a, "properties": props}, "0"]
        )
        return next(m for m in got["list"] if m["role"] == "inbox")

    assert [(await inbox())[p] for p in props[1:]] == [3, 3, 2, 2]
    (query,) = await call(
        jmap_server, alice, ["Email/query", {"accountId": a, "filter": {"subject": "b"}}, "0"]
    )
    (lone,) = query["ids"]
    await call(
        jmap_server,
        alice,
        ["Email/set", {"accountId": a, "update": {lone: {"keywords/$seen": True}}}, "0"],
    )
    assert [(await inbox())[p] for p in props[1:]] == [3, 2, 2, 1]
