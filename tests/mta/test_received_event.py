"""Inbound delivery writes email.received into the account's event log, with the mail."""

from __future__ import annotations

from common.runtime import Runtime
from tests.mta import factories
from tests.mta.conftest import send

MESSAGE = (
    b"From: Ann Example <ann@sender.test>\r\n"
    b"To: alice@example.test, carol@example.test\r\n"
    b"Cc: dave@example.test\r\n"
    b"Subject: Quarterly numbers\r\n"
    b"Message-ID: <q1@sender.test>\r\n"
    b"\r\n"
    b"The body stays out of the event.\r\n"
)


async def test_a_delivered_message_is_an_email_received_event(
    runtime: Runtime, smtp_port: int
) -> None:
    alice = await factories.mailbox_owner(runtime.db, "alice@example.test")
    bob = await factories.mailbox_owner(runtime.db, "bob@other.test")
    result = await send(smtp_port, "ann@sender.test", ["alice@example.test"], MESSAGE)
    assert result["data"][0] == 250
    rows = await runtime.db.fetch_all(
        "SELECT account_id::text, type, email_id::text, payload FROM mta.events"
    )
    [row] = rows
    email_id = await runtime.db.fetch_val(
        "SELECT id::text FROM mta.emails WHERE address_id = %s", (alice["address_id"],)
    )
    assert row["account_id"] == alice["account_id"] != bob["account_id"]
    assert row["type"] == "email.received" and row["email_id"] == email_id
    data = row["payload"]["data"]
    assert data["email_id"] == email_id
    assert data["from"] == "Ann Example <ann@sender.test>"
    assert data["to"] == ["alice@example.test", "carol@example.test"]
    assert data["cc"] == ["dave@example.test"] and data["bcc"] == []
    assert data["subject"] == "Quarterly numbers"
    assert "q1@sender.test" in data["message_id"]
    assert "body" not in str(row["payload"])


async def test_a_refused_message_is_no_event(runtime: Runtime, smtp_port: int) -> None:
    await factories.mailbox_owner(runtime.db, "alice@example.test")
    result = await send(smtp_port, "ann@sender.test", ["nobody@example.test"], MESSAGE)
    assert result["data"] is None
    assert await runtime.db.fetch_val("SELECT count(*) FROM mta.events") == 0
