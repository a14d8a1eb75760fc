"""VacationResponse/get/set and the replies delivery records; Identity/get/changes/set."""

from __future__ import annotations

from email import message_from_bytes
from typing import Any

from jmapc.methods import IdentityGet

from tests.mta.conftest import send
from tests.mta.jmap.conftest import Mailbox, Server, run

VACATION = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:vacationresponse"]
SUBMISSION = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:submission"]


def mail(
    sender: str = "carol@remote.test", to: str = "alice@example.test", extra: str = ""
) -> bytes:
    return (
        f"From: Carol <{sender}>\r\nTo: {to}\r\nSubject: Lunch?\r\n"
        f"Message-ID: <q-{abs(hash((sender, to, extra)))}@remote.test>\r\n{extra}\r\nHi\r\n"
    ).encode()


async def replies(db: Any, address_id: str) -> list[dict[str, Any]]:
    return await db.fetch_all(
        "SELECT mail_from, rcpt_to, message, status FROM mta.auto_replies WHERE address_id = %s"
        " ORDER BY created_at",
        (address_id,),
    )


async def enable(server: Server, who: Mailbox, **values: Any) -> dict[str, Any]:
    body = {
        "using": VACATION,
        "methodCalls": [
            [
                "VacationResponse/set",
                {"accountId": who.address_id, "update": {"singleton": values}},
                "0",
            ],
            ["VacationResponse/get", {"accountId": who.address_id}, "1"],
        ],
    }
    responses = (await server.post(who.basic, body)).json()["methodResponses"]
    assert responses[0][1]["updated"] == {"singleton": None}, responses
    return responses[1][1]["list"][0]


async def test_vacation_replies_once_per_sender_per_period(
    jmap_server: Server, alice: Mailbox, smtp_port: int, db: Any, clock: Any
) -> None:
    got = await enable(
        jmap_server,
        alice,
        isEnabled=True,
        subject="Away",
        textBody="Back on Monday.",
        toDate="2030-02-01T00:00:00Z",
    )
    assert got == {
        "id": "singleton",
        "isEnabled": True,
        "fromDate": None,
        "toDate": "2030-02-01T00:00:00Z",
        "subject": "Away",
        "textBody": "Back on Monday.",
        "htmlBody": None,
    }
    for _ in range(2):
        assert (await send(smtp_port, "carol@remote.test", [alice.email], mail()))["data"][0] == 250
    rows = await replies(db, alice.address_id)
    assert len(rows) == 1
    assert rows[0]["mail_from"] == "" and rows[0]["rcpt_to"] == "carol@remote.test"
    reply = message_from_bytes(bytes(rows[0]["message"]))
    assert reply["Auto-Submitted"] == "auto-replied" and reply["Subject"] == "Away"
    assert reply["To"] == "carol@remote.test" and reply["In-Reply-To"].startswith("<q-")
    assert "Back on Monday." in reply.get_payload(decode=True).decode()
    clock.advance(days=8)
    assert (await send(smtp_port, "carol@remote.test", [alice.email], mail()))["data"][0] == 250
    assert len(await replies(db, alice.address_id)) == 2
    # After toDate: silence.
    clock.advance(days=60)
    assert (await send(smtp_port, "dave@remote.test", [alice.email], mail("dave@remote.test")))[
        "data"
    ][0] == 250
    assert len(await replies(db, alice.address_id)) == 2


async def test_no_vacation_reply_to_lists_bulk_robots_or_bcc(
    jmap_server: Server, alice: Mailbox, smtp_port: int, db: Any
) -> None:
    await enable(jmap_server, alice, isEnabled=True)
    cases = [
        ("list@remote.test", mail("list@remote.test", extra="List-Id: <l.remote.test>\r\n")),
        ("bulk@remote.test", mail("bulk@remote.test", extra="Precedence: bulk\r\n")),
        ("bot@remote.test", mail("bot@remote.test", extra="Auto-Submitted: auto-generated\r\n")),
        ("owner-x@remote.test", mail("owner-x@remote.test")),
        ("MAILER-DAEMON@remote.test", mail("MAILER-DAEMON@remote.test")),
        ("bcc@remote.test", mail("bcc@remote.test", to="someone@else.test")),
        ("", mail("null@remote.test")),
    ]
    for sender, message in cases:
        assert (await send(smtp_port, sender, [alice.email], message))["data"][0] == 250, sender
    assert await replies(db, alice.address_id) == []
    # Disabled: nothing either.
    await enable(jmap_server, alice, isEnabled=False)
    assert (await send(smtp_port, "carol@remote.test", [alice.email], mail()))["data"][0] == 250
    assert await replies(db, alice.address_id) == []


async def test_vacation_set_refuses_create_destroy_and_bad_values(
    jmap_server: Server, alice: Mailbox
) -> None:
    body = {
        "using": VACATION,
        "methodCalls": [
            [
                "VacationResponse/set",
                {
                    "accountId": alice.address_id,
                    "create": {"x": {}},
                    "destroy": ["singleton"],
                    "update": {"singleton": {"fromDate": "yesterday", "isEnabled": "yes"}},
                },
                "0",
            ]
        ],
    }
    result = (await jmap_server.post(alice.basic, body)).json()["methodResponses"][0][1]
    assert result["notCreated"]["x"]["type"] == "singleton"
    assert result["notDestroyed"]["singleton"]["type"] == "singleton"
    assert sorted(result["notUpdated"]["singleton"]["properties"]) == ["fromDate", "isEnabled"]


async def test_identities(jmap_server: Server, alice: Mailbox) -> None:
    client = jmap_server.client(alice.email)
    first = await run(client.request, IdentityGet())
    assert [(i.email, i.may_delete) for i in first.data] == [(alice.email, True)]
    a = alice.address_id
    body = {
        "using": SUBMISSION,
        "methodCalls": [
            [
                "Identity/set",
                {
                    "accountId": a,
                    "create": {
                        "work": {
                            "email": alice.email,
                            "name": "Alice at work",
                            "textSignature": "-- A",
                            "replyTo": [{"email": "desk@example.test"}],
                        },
                        "spoof": {"email": "ceo@example.test", "name": "CEO"},
                    },
                    "update": {first.data[0].id: {"name": "Alice"}},
                },
                "0",
            ],
            ["Identity/changes", {"accountId": a, "sinceState": first.state}, "1"],
            ["Identity/get", {"accountId": a, "ids": ["#work"]}, "2"],
        ],
    }
    responses = (await jmap_server.post(alice.basic, body)).json()["methodResponses"]
    set_, changes, got = (r[1] for r in responses)
    assert set_["notCreated"]["spoof"]["type"] == "forbiddenFrom"
    work = set_["created"]["work"]["id"]
    assert changes["created"] == [work] and changes["updated"] == [first.data[0].id]
    assert got["list"][0]["replyTo"] == [{"name": None, "email": "desk@example.test"}]
    assert got["list"][0]["textSignature"] == "-- A"
