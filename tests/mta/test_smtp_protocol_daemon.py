"""The bulk DATA reader in the running daemon: real clients, stored mail read back."""

from __future__ import annotations

import asyncio
from typing import Any

from common.db import Database
from mta.context import MtaContext
from mta.smtp import replies
from mta.store import emails
from tests.mta import factories
from tests.mta.conftest import MAX_SIZE, send, smtp_client
from tests.mta.test_smtp_protocol_data import Client

RCPT = "alice@example.test"
HEAD = b"From: bob@sender.test\r\nTo: alice@example.test\r\nSubject: Dots\r\n\r\n"
ENVELOPE = f"MAIL FROM:<bob@sender.test>\r\nRCPT TO:<{RCPT}>\r\nDATA\r\n".encode()
# Lines a client must dot-stuff (RFC 5321 4.5.2), last one without its CRLF.
BODY = b".\r\n..\r\n.hidden\r\nmiddle . dot\r\n...\r\n\r\n.last line, no CRLF"


async def stored(db: Database, mta_ctx: MtaContext, owner: dict[str, Any]) -> list[bytes]:
    async with db.connection() as conn:
        rows = await emails.for_address(conn, owner["address_id"])
    return [await mta_ctx.blobs.get(row["blob_id"]) for row in rows]


def body_of(raw: bytes) -> bytes:
    # What follows the header our trace fields were put in front of.
    return raw.split(b"\r\n\r\n", 1)[1]


async def raw_session(port: int) -> Client:
    client = await Client.connect(port)
    await client.send(b"EHLO client.test\r\n")
    await client.replies(1)
    return client


async def start_data(client: Client) -> None:
    await client.send(ENVELOPE)
    assert (await client.replies(3))[-1].startswith(b"354")


async def test_smtplib_dot_stuffed_lines_arrive_as_written(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, RCPT)
    result = await send(smtp_port, "bob@sender.test", [RCPT], HEAD + BODY)
    assert result["data"][0] == 250
    # smtplib ends the data with CRLF before the dot when the message has none.
    assert [body_of(raw) for raw in await stored(db, mta_ctx, owner)] == [BODY + b"\r\n"]


async def test_aiosmtplib_dot_stuffed_lines_arrive_as_written(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, RCPT)
    async with smtp_client(smtp_port) as client:
        await client.sendmail("bob@sender.test", [RCPT], HEAD + BODY + b"\r\n")
    assert [body_of(raw) for raw in await stored(db, mta_ctx, owner)] == [BODY + b"\r\n"]


async def test_an_empty_message_is_accepted_as_empty(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, RCPT)
    client = await raw_session(smtp_port)
    await start_data(client)
    await client.send(b".\r\nQUIT\r\n")
    data, bye = await client.replies(2)
    client.close()
    assert data.startswith(b"250 2.0.0 OK: stored as") and bye.startswith(b"221")
    [raw] = await stored(db, mta_ctx, owner)
    # Only the fields the daemon puts in front: the message itself was empty.
    assert raw.startswith(b"Received: ") and raw.endswith(b"\r\n")
    assert b"Subject" not in raw


async def test_the_end_of_data_split_over_tcp_writes_and_a_pipelined_next_message(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, RCPT)
    client = await raw_session(smtp_port)
    await start_data(client)
    # The terminator in pieces with pauses, then the next transaction right behind it.
    await client.send(HEAD + b"first\r", b"\n.", b"\r", b"\n" + ENVELOPE, pause=0.05)
    first, mail, rcpt, go_ahead = await client.replies(4)
    assert first.startswith(b"250 2.0.0 OK: stored as")
    assert (mail, rcpt) == (
        f"{replies.SENDER_OK}\r\n".encode(),
        f"{replies.RECIPIENT_OK}\r\n".encode(),
    )
    assert go_ahead.startswith(b"354")
    await client.send(HEAD + b"second\r\n.\r\nQUIT\r\n")
    second, bye = await client.replies(2)
    client.close()
    assert second.startswith(b"250 2.0.0 OK: stored as") and bye.startswith(b"221")
    bodies = sorted(body_of(raw) for raw in await stored(db, mta_ctx, owner))
    assert bodies == [b"first\r\n", b"second\r\n"]


async def test_oversize_data_and_an_over_long_line_are_refused_and_the_session_goes_on(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, RCPT)
    client = await raw_session(smtp_port)
    outcomes = []
    for data in (
        HEAD + (b"y" * 900 + b"\r\n") * (MAX_SIZE // 900 + 2),
        HEAD + b"z" * 1200 + b"\r\n",
        HEAD + b"fine\r\n",
    ):
        await start_data(client)
        await client.send(data + b".\r\n")
        outcomes.append((await client.replies(1))[0])
    client.close()
    assert outcomes[0] == f"{replies.MESSAGE_TOO_BIG}\r\n".encode()
    assert outcomes[1] == b"500 Line too long (see RFC5321 4.5.3.1.6)\r\n"
    assert outcomes[2].startswith(b"250 2.0.0 OK: stored as")
    assert [body_of(raw) for raw in await stored(db, mta_ctx, owner)] == [b"fine\r\n"]


async def test_a_connection_dropped_during_data_stores_nothing(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, RCPT)
    client = await raw_session(smtp_port)
    await start_data(client)
    await client.send(HEAD + b"half a message\r\n", pause=0.05)
    client.writer.transport.abort()  # no end of data, no QUIT
    await asyncio.sleep(0.1)
    # The daemon still serves, and the next client's message is the only one stored.
    async with smtp_client(smtp_port) as other:
        await other.sendmail("bob@sender.test", [RCPT], HEAD + b"whole\r\n")
    assert [body_of(raw) for raw in await stored(db, mta_ctx, owner)] == [b"whole\r\n"]
