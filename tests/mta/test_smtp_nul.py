"""NUL characters over real SMTP: refused for good where SMTP forbids them, stored where they are data.

RFC 5321 addresses and RFC 5322/6532 message text cannot hold NUL (nor can 7bit
or 8bit MIME content, RFC 2045 2.7-2.8; BINARYMIME is not offered), so both are
permanent refusals (5xx): a sender retrying for days would never succeed. A NUL
that only appears once a transfer encoding is decoded (quoted-printable =00,
base64, an encoded word) is the message's data: the message is stored as sent.
"""

from __future__ import annotations

import pytest

from common.db import Database
from mta.context import MtaContext
from mta.smtp import replies
from mta.store import emails
from tests.mta import factories
from tests.mta.conftest import send
from tests.mta.test_smtp_protocol_daemon import raw_session, stored
from tests.mta.test_smtp_protocol_data import Client

RCPT = "alice@example.test"


def reply_line(reply: str) -> bytes:
    return f"{reply}\r\n".encode()


async def test_a_nul_in_the_recipient_address_is_a_permanent_syntax_error(
    db: Database, smtp_port: int
) -> None:
    await factories.mailbox_owner(db, RCPT)
    client = await raw_session(smtp_port)
    await client.send(b"MAIL FROM:<bob@sender.test>\r\nRCPT TO:<alice\x00@example.test>\r\n")
    _mail, rcpt = await client.replies(2)
    await client.send(
        b"RCPT TO:<ali\x00ce@example.test> SIZE=10\r\nRCPT TO:<alice@ex\x00ample.test>\r\n"
    )
    more = await client.replies(2)
    client.close()
    assert rcpt == reply_line(replies.BAD_RECIPIENT_SYNTAX)
    assert all(r.startswith(b"5") for r in more), more


async def test_invalid_utf_8_in_an_address_is_a_permanent_syntax_error(
    db: Database, smtp_port: int
) -> None:
    # RFC 6531 3.3: addresses are UTF-8; bytes that are not are no address at all.
    await factories.mailbox_owner(db, RCPT)
    client = await raw_session(smtp_port)
    await client.send(b"MAIL FROM:<b\xffob@sender.test>\r\nMAIL FROM:<bob@sender.test>\r\n")
    await client.send(b"RCPT TO:<al\xffice@example.test>\r\nRCPT TO:<alice@ex\xe9ample.test>\r\n")
    replies_ = await client.replies(4)
    client.close()
    assert replies_ == [
        reply_line(replies.BAD_SENDER_SYNTAX),
        reply_line(replies.SENDER_OK),
        reply_line(replies.BAD_RECIPIENT_SYNTAX),
        reply_line(replies.BAD_RECIPIENT_SYNTAX),
    ]


async def test_a_nul_in_the_sender_address_is_a_permanent_syntax_error(smtp_port: int) -> None:
    client = await raw_session(smtp_port)
    await client.send(b"MAIL FROM:<bob\x00@sender.test>\r\n")
    [mail] = await client.replies(1)
    client.close()
    assert mail == reply_line(replies.BAD_SENDER_SYNTAX)


@pytest.mark.parametrize(
    "raw",
    [
        b"From: bob@sender.test\r\nSubject: a\x00b\r\n\r\nbody\r\n",
        b"From: bob@sender.test\r\nX-Note\x00: x\r\n\r\nbody\r\n",
        b"From: bob@sender.test\r\nSubject: s\r\n\r\nearly \x00 in the body\r\n",
    ],
    ids=["header value", "header name", "body"],
)
async def test_a_nul_byte_in_the_message_is_refused_for_good_and_nothing_stored(
    db: Database, smtp_port: int, raw: bytes
) -> None:
    owner = await factories.mailbox_owner(db, RCPT)
    result = await send(smtp_port, "bob@sender.test", [RCPT], raw)
    assert result["data"] == (554, replies.NUL_IN_CONTENT.split(" ", 1)[1])
    async with db.connection() as conn:
        assert await emails.for_address(conn, owner["address_id"]) == []


async def test_quoted_printable_and_encoded_word_nuls_are_data_and_stored_as_sent(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, RCPT)
    raw = (
        b"From: =?utf-8?q?B=00ob?= <bob@sender.test>\r\nTo: alice@example.test\r\n"
        b"Subject: =?utf-8?q?zero=00byte?= =?utf-8?b?AAE=?=\r\n"
        b"Message-ID: <nul=00@sender.test>\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Transfer-Encoding: quoted-printable\r\n\r\n"
        b"before=00after and a second =00 here\r\n"
    )
    result = await send(smtp_port, "bob@sender.test", [RCPT], raw)
    assert result["data"][0] == 250, result
    [stored_raw] = await stored(db, mta_ctx, owner)
    assert stored_raw.endswith(raw)  # the bytes as sent, behind our trace fields
    async with db.connection() as conn:
        [row] = await emails.for_address(conn, owner["address_id"])
    # The text columns hold what can be shown: the decoded NULs are left out.
    assert row["subject"] == "zerobyte\x01"  # adjacent encoded words join (RFC 2047 6.2)
    assert row["preview"] == "beforeafter and a second here"
    assert row["from_addrs"] == [{"name": "Bob", "email": "bob@sender.test"}]


async def test_a_helo_name_with_a_nul_or_bytes_not_utf_8_is_a_syntax_error(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, RCPT)
    client = await Client.connect(smtp_port)
    await client.send(b"EHLO b\xffad.test\r\nMAIL FROM:<>\r\nHELO nu\x00l.test\r\n")
    ehlo, mail, helo = await client.replies(3)
    await client.send(b"EHLO good.test\r\nMAIL FROM:<>\r\n")
    await client.send(f"RCPT TO:<{RCPT}>\r\nDATA\r\n".encode())
    assert (await client.replies(4))[-1].startswith(b"354")
    await client.send(b"Subject: after a bad EHLO\r\n\r\nbody\r\n.\r\n")
    [data] = await client.replies(1)
    client.close()
    assert (ehlo, helo) == (reply_line(replies.BAD_HELO_SYNTAX),) * 2
    assert mail.startswith(b"503")  # no usable HELO/EHLO yet
    assert data.startswith(b"250 2.0.0 OK: stored as")
    [raw] = await stored(db, mta_ctx, owner)
    assert raw.startswith(b"Received: from good.test ")
