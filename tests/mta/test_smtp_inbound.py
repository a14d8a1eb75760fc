"""Real mail through the running daemon: smtplib and aiosmtplib against aiosmtpd."""

from __future__ import annotations

import email
from email import policy

import aiosmtplib
import pytest

from common.db import Database
from mta.context import MtaContext
from mta.service import collect_blobs
from mta.smtp import replies
from mta.store import emails, mailboxes, quota
from tests.mta import factories
from tests.mta.conftest import MAX_SIZE, send, smtp_client


def message(
    subject: str = "Hello", *, to: str = "alice@example.test", body: str = "Hi there"
) -> bytes:
    return (
        f"From: Bob <bob@sender.test>\r\nTo: {to}\r\nSubject: {subject}\r\n"
        f"Message-ID: <{subject.replace(' ', '-')}@sender.test>\r\n"
        f"Date: Thu, 01 Jan 2026 10:00:00 +0000\r\n\r\n{body}\r\n"
    ).encode()


def code_of(reply: str) -> int:
    return int(reply.split()[0])


async def test_ehlo_advertises_size_8bitmime_smtputf8_pipelining_and_no_auth(
    smtp_port: int,
) -> None:
    async with smtp_client(smtp_port) as client:
        assert client.supports_extension("size")
        assert client.esmtp_extensions["size"] == str(MAX_SIZE)
        assert client.supports_extension("8bitmime")
        assert client.supports_extension("smtputf8")
        assert client.supports_extension("pipelining")
        assert not client.supports_extension("auth")
        assert not client.supports_extension("starttls")  # no certificate configured


async def test_one_recipient_is_stored_with_trace_headers(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    result = await send(smtp_port, "bob@sender.test", ["alice@example.test"], message("First"))
    assert result["refused"] == {}
    assert result["data"][0] == 250
    assert "stored as" in result["data"][1]
    async with db.connection() as conn:
        stored = await emails.for_address(conn, owner["address_id"])
        folders = {
            m["role"]: m for m in await mailboxes.list_for_address(conn, owner["address_id"])
        }
        used, count = await quota.usage(conn, owner["address_id"])
    assert len(stored) == 1
    row = stored[0]
    assert row["subject"] == "First"
    assert row["message_id"] == "First@sender.test"
    assert row["from_addrs"] == [{"name": "Bob", "email": "bob@sender.test"}]
    assert row["preview"] == "Hi there"
    assert row["folders"] == ["Inbox"]
    assert row["envelope_from"] == "bob@sender.test"
    assert set(folders) == {"inbox", "drafts", "sent", "archive", "junk", "trash"}
    assert (folders["inbox"]["total_emails"], folders["inbox"]["unread_emails"]) == (1, 1)
    raw = await mta_ctx.blobs.get(row["blob_id"])
    assert used == len(raw) == row["size"] and count == 1
    parsed = email.message_from_bytes(raw, policy=policy.default)
    assert parsed["Received"].startswith("from client.test ([127.0.0.1])")
    assert "by mx.test" in parsed["Received"] and "for <alice@example.test>" in parsed["Received"]
    assert parsed["Authentication-Results"].startswith("mx.test;")
    assert "spf=none" in parsed["Authentication-Results"]


async def test_several_recipients_share_one_blob(db: Database, smtp_port: int) -> None:
    alice = await factories.mailbox_owner(db, "alice@example.test")
    carol_id = await factories.address(db, alice["domain_id"], "carol")
    dave = await factories.mailbox_owner(db, "dave@other.test")
    result = await send(
        smtp_port,
        "bob@sender.test",
        ["alice@example.test", "carol@example.test", "dave@other.test", "ALICE@Example.test"],
        message("Team"),
    )
    assert result["refused"] == {} and result["data"][0] == 250
    rows = [
        await emails.for_address(conn, a)
        for conn in [await _conn(db)]
        for a in (alice["address_id"], carol_id, dave["address_id"])
    ]
    assert [len(r) for r in rows] == [1, 1, 1]  # alice twice in RCPT still gets one copy
    assert len({r[0]["blob_id"] for r in rows}) == 1
    assert await db.fetch_val("SELECT count(DISTINCT blob_id) FROM mta.emails") == 1


async def _conn(db: Database):  # type: ignore[no-untyped-def]
    async with db.connection() as conn:
        return conn


async def test_unknown_recipient_550_relay_554_and_only_valid_ones_get_mail(
    db: Database, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    result = await send(
        smtp_port,
        "bob@sender.test",
        ["nobody@example.test", "victim@gmail.test", "alice@example.test"],
        message("Mixed"),
    )
    assert result["refused"]["nobody@example.test"][0] == code_of(replies.UNKNOWN_USER)
    assert "5.1.1" in result["refused"]["nobody@example.test"][1]
    assert result["refused"]["victim@gmail.test"][0] == code_of(replies.RELAY_DENIED)
    assert "5.7.1" in result["refused"]["victim@gmail.test"][1]
    assert result["data"][0] == 250
    assert await db.fetch_val("SELECT count(*) FROM mta.emails") == 1
    assert await db.fetch_val("SELECT address_id::text FROM mta.emails") == owner["address_id"]


async def test_never_an_open_relay(db: Database, smtp_port: int) -> None:
    await factories.mailbox_owner(db, "alice@example.test")
    # A sender on a hosted domain still cannot relay to the outside.
    result = await send(smtp_port, "alice@example.test", ["victim@elsewhere.test"], message())
    assert result["refused"]["victim@elsewhere.test"][0] == 554
    assert result["data"] is None
    assert await db.fetch_val("SELECT count(*) FROM mta.emails") == 0


async def test_oversize_message_is_refused_by_declared_size_and_by_data(
    db: Database, smtp_port: int
) -> None:
    await factories.mailbox_owner(db, "alice@example.test")
    async with smtp_client(smtp_port) as client:
        with pytest.raises(aiosmtplib.SMTPSenderRefused) as declared:
            await client.mail("bob@sender.test", options=[f"SIZE={MAX_SIZE + 1}"])
        assert declared.value.code == 552 and "5.3.4" in declared.value.message
        await client.rset()
        # A client that lies about SIZE (or sends none) is cut off while DATA is read.
        big = message(body=("y" * 900 + "\r\n") * (MAX_SIZE // 900 + 5))
        await client.mail("bob@sender.test")
        await client.rcpt("alice@example.test")
        with pytest.raises(aiosmtplib.SMTPDataError) as data:
            await client.data(big)
        assert data.value.code == 552 and "5.3.4" in data.value.message
    assert await db.fetch_val("SELECT count(*) FROM mta.emails") == 0


async def test_over_quota_answers_452_and_shows_in_activity(db: Database, smtp_port: int) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test", quota_bytes=1000)
    first = await send(
        smtp_port, "bob@sender.test", ["alice@example.test"], message(body="a" * 900)
    )
    assert first["data"][0] == 250
    second = await send(smtp_port, "bob@sender.test", ["alice@example.test"], message("Two"))
    code, text = second["refused"]["alice@example.test"]
    assert code == 452 and "4.2.2" in text
    assert await db.fetch_val("SELECT count(*) FROM mta.emails") == 1
    kinds = await db.fetch_all(
        "SELECT kind, outcome FROM mta.activity WHERE address_id = %s ORDER BY id",
        (owner["address_id"],),
    )
    assert [k["kind"] for k in kinds] == ["received", "refused"]
    assert "quota" in kinds[1]["outcome"]


async def test_declared_size_over_the_remaining_quota_is_refused(
    db: Database, smtp_port: int
) -> None:
    await factories.mailbox_owner(db, "alice@example.test", quota_bytes=5000)
    async with smtp_client(smtp_port) as client:
        await client.mail("bob@sender.test", options=["SIZE=6000"])
        with pytest.raises(aiosmtplib.SMTPRecipientRefused) as refused:
            await client.rcpt("alice@example.test")
        assert refused.value.code == 452


async def test_fallback_domain_and_subaddress(db: Database, smtp_port: int) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    alias_domain = await factories.domain(
        db, owner["account_id"], "example-alias.test", fallback_domain_id=owner["domain_id"]
    )
    assert alias_domain
    result = await send(
        smtp_port,
        "bob@sender.test",
        ["alice@example-alias.test", "alice+news@example.test", "bob@example-alias.test"],
        message("Via fallback"),
    )
    assert result["refused"] == {
        "bob@example-alias.test": (550, result["refused"]["bob@example-alias.test"][1])
    }
    assert result["data"][0] == 250
    async with db.connection() as conn:
        stored = await emails.for_address(conn, owner["address_id"])
    assert len(stored) == 1  # both recipients are alice: one copy


async def test_8bit_message(db: Database, smtp_port: int) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    body = "Grüße aus Köln – ça va?".encode()
    raw = (
        b"From: bob@sender.test\r\nTo: alice@example.test\r\nSubject: eight bit\r\n"
        b"MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n"
        b"Content-Transfer-Encoding: 8bit\r\n\r\n" + body + b"\r\n"
    )
    async with smtp_client(smtp_port) as client:
        await client.mail("bob@sender.test", options=["BODY=8BITMIME"])
        await client.rcpt("alice@example.test")
        response = await client.data(raw)
        assert response.code == 250
    async with db.connection() as conn:
        row = (await emails.for_address(conn, owner["address_id"]))[0]
    assert row["preview"] == "Grüße aus Köln – ça va?"


async def test_utf8_message_with_smtputf8(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    raw = (
        "From: Jörg <jörg@bücher.test>\r\nTo: alice@example.test\r\nSubject: Привет мир\r\n"
        "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nЗдравствуйте\r\n"
    ).encode()
    async with smtp_client(smtp_port) as client:
        await client.mail(
            "jörg@bücher.test", options=["SMTPUTF8", "BODY=8BITMIME"], encoding="utf-8"
        )
        await client.rcpt("alice@example.test")
        response = await client.data(raw)
        assert response.code == 250
    async with db.connection() as conn:
        row = (await emails.for_address(conn, owner["address_id"]))[0]
    assert row["subject"] == "Привет мир"
    assert row["from_addrs"] == [{"name": "Jörg", "email": "jörg@bücher.test"}]
    assert row["envelope_from"] == "jörg@bücher.test"
    raw_stored = await mta_ctx.blobs.get(row["blob_id"])
    assert b"with UTF8SMTP id" in raw_stored
    assert "smtp.mailfrom=jörg@bücher.test".encode() in raw_stored


async def test_pipelined_transaction_with_aiosmtplib_send_message(
    db: Database, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    msg = email.message.EmailMessage()
    msg["From"] = "bob@sender.test"
    msg["To"] = "alice@example.test"
    msg["Subject"] = "Sent with aiosmtplib"
    msg.set_content("pipelined")
    errors, reply = await aiosmtplib.send(
        msg, hostname="127.0.0.1", port=smtp_port, start_tls=False, local_hostname="client.test"
    )
    assert errors == {} and reply.startswith("2.0.0 OK")
    async with db.connection() as conn:
        assert [r["subject"] for r in await emails.for_address(conn, owner["address_id"])] == [
            "Sent with aiosmtplib"
        ]


async def test_threads_follow_references(db: Database, smtp_port: int) -> None:
    owner = await factories.mailbox_owner(db, "alice@example.test")
    first = message("Plan")
    reply = (
        b"From: carol@sender.test\r\nTo: alice@example.test\r\nSubject: Re: Plan\r\n"
        b"Message-ID: <reply1@sender.test>\r\nIn-Reply-To: <Plan@sender.test>\r\n"
        b"References: <Plan@sender.test>\r\n\r\nagreed\r\n"
    )
    other = message("Unrelated")
    for raw in (first, reply, other):
        assert (await send(smtp_port, "bob@sender.test", ["alice@example.test"], raw))["data"][
            0
        ] == 250
    async with db.connection() as conn:
        rows = {r["subject"]: r for r in await emails.for_address(conn, owner["address_id"])}
    assert rows["Plan"]["thread_id"] == rows["Re: Plan"]["thread_id"]
    assert rows["Unrelated"]["thread_id"] != rows["Plan"]["thread_id"]


async def test_deleting_an_address_removes_its_raw_mail_once_nothing_shares_it(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    alice = await factories.mailbox_owner(db, "alice@example.test")
    carol_id = await factories.address(db, alice["domain_id"], "carol")
    shared = await send(
        smtp_port, "bob@sender.test", ["alice@example.test", "carol@example.test"], message("Both")
    )
    only = await send(smtp_port, "bob@sender.test", ["alice@example.test"], message("Alice only"))
    assert shared["data"][0] == only["data"][0] == 250
    blobs = {
        r["subject"]: r["blob_id"]
        for r in await db.fetch_all("SELECT DISTINCT subject, blob_id FROM mta.emails")
    }
    await db.execute("DELETE FROM mail.addresses WHERE id = %s", (alice["address_id"],))
    assert await collect_blobs(mta_ctx) == 1
    assert not await mta_ctx.blobs.exists(blobs["Alice only"])
    assert await mta_ctx.blobs.exists(blobs["Both"])  # carol still has it
    await db.execute("DELETE FROM mail.addresses WHERE id = %s", (carol_id,))
    assert await collect_blobs(mta_ctx) == 1
    assert not await mta_ctx.blobs.exists(blobs["Both"])
    assert await db.fetch_val("SELECT count(*) FROM mta.blob_candidates") == 0
