"""One store for every protocol: what IMAP writes JMAP reads at once, and the reverse."""

from __future__ import annotations

import imaplib
import re
from typing import Any

import pytest

from tests.mta.imap.conftest import Imap, Mailbox, run
from tests.mta.jmap.conftest import MAIL, Server, jmap_server

__all__ = ["jmap_server"]

MESSAGE = (
    b"From: Carol <carol@remote.test>\r\nTo: alice@example.test\r\nSubject: Agreement\r\n"
    b"Message-ID: <agree@remote.test>\r\n\r\nBoth ways.\r\n"
)


async def jmap(server: Server, user: Mailbox, *calls: list[Any]) -> list[Any]:
    r = await server.post(user.basic, {"using": MAIL, "methodCalls": list(calls)})
    assert r.status_code == 200, r.text
    return r.json()["methodResponses"]  # type: ignore[no-any-return]


async def emails(server: Server, user: Mailbox) -> list[dict[str, Any]]:
    out = await jmap(
        server,
        user,
        ["Email/query", {"accountId": user.address_id}, "q"],
        [
            "Email/get",
            {
                "accountId": user.address_id,
                "#ids": {"resultOf": "q", "name": "Email/query", "path": "/ids"},
                "properties": ["keywords", "mailboxIds", "subject"],
            },
            "g",
        ],
    )
    return out[1][1]["list"]  # type: ignore[no-any-return]


async def roles(server: Server, user: Mailbox) -> dict[str, str]:
    out = await jmap(server, user, ["Mailbox/get", {"accountId": user.address_id}, "m"])
    return {m["role"] or m["name"]: m["id"] for m in out[0][1]["list"]}


@pytest.fixture
async def session(imap: Imap, alice: Mailbox) -> Any:
    client = await run(imap.connect, alice)
    yield client
    await run(client.logout)


async def test_append_and_flags_over_imap_show_up_over_jmap(
    jmap_server: Server, alice: Mailbox, session: imaplib.IMAP4_SSL
) -> None:
    state = (
        await jmap(
            jmap_server, alice, ["Email/get", {"accountId": alice.address_id, "ids": []}, "s"]
        )
    )[0][1]["state"]
    typ, _ = await run(session.append, "INBOX", r"(\Seen)", None, MESSAGE)
    assert typ == "OK"
    [email] = await emails(jmap_server, alice)
    box = await roles(jmap_server, alice)
    assert email["subject"] == "Agreement"
    assert email["keywords"] == {"$seen": True}
    assert email["mailboxIds"] == {box["inbox"]: True}
    changes = await jmap(
        jmap_server,
        alice,
        ["Email/changes", {"accountId": alice.address_id, "sinceState": state}, "c"],
    )
    assert changes[0][1]["created"] == [email["id"]]

    await run(session.select, "INBOX")
    await run(session.store, "1", "+FLAGS", r"(\Flagged $Forwarded)")
    [email] = await emails(jmap_server, alice)
    assert email["keywords"] == {"$seen": True, "$flagged": True, "$forwarded": True}

    await run(session.store, "1", "+FLAGS", r"(\Deleted)")
    await run(session.expunge)
    assert await emails(jmap_server, alice) == []


async def test_jmap_changes_reach_a_selected_imap_session(
    jmap_server: Server, alice: Mailbox, session: imaplib.IMAP4_SSL
) -> None:
    await run(session.append, "INBOX", None, None, MESSAGE)
    await run(session.append, "INBOX", None, None, MESSAGE.replace(b"agree@", b"second@"))
    await run(session.select, "INBOX")
    box = await roles(jmap_server, alice)
    first, second = sorted(await emails(jmap_server, alice), key=lambda e: e["id"])
    found = {e["id"] for e in (first, second)}
    assert len(found) == 2
    # Flag one, move the other to the archive, over JMAP.
    await jmap(
        jmap_server,
        alice,
        [
            "Email/set",
            {
                "accountId": alice.address_id,
                "update": {
                    first["id"]: {"keywords/$flagged": True},
                    second["id"]: {"mailboxIds": {box["archive"]: True}},
                },
            },
            "u",
        ],
    )

    def noop() -> tuple[list[Any], list[Any], Any]:
        session.noop()
        fetches = session.response("FETCH")[1]
        expunges = session.response("EXPUNGE")[1]
        session.select("Archive")
        got = session.uid("FETCH", "1:*", "(FLAGS BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])")
        return fetches, expunges, got

    fetches, expunges, archived = await run(noop)
    assert any(b"\\Flagged" in f for f in fetches if f), fetches
    assert len([e for e in expunges if e]) == 1
    assert archived[0] == "OK" and re.search(rb"UID 1 ", archived[1][0][0])
