"""Python's imaplib against the real daemon: the protocol walk a mail client makes."""

from __future__ import annotations

import imaplib
import re
from typing import Any

import aioimaplib
import pytest

from tests.mta.imap.conftest import Imap, Mailbox, client_tls, run
from tests.mta.imap.shared import module_alice, module_db, module_imap  # noqa: F401

# One daemon for the module; each test signs in as a mailbox of its own.
pytestmark = pytest.mark.asyncio(loop_scope="module")

MESSAGE = (
    b"From: Carol <carol@remote.test>\r\n"
    b"To: alice@example.test\r\n"
    b"Subject: Lunch?\r\n"
    b"Date: Tue, 01 Sep 2026 10:00:00 +0000\r\n"
    b"Message-ID: <lunch@remote.test>\r\n"
    b"\r\n"
    b"Shall we?\r\n"
)


async def test_login_list_select_append_fetch_store_search_copy_move_expunge(
    imap: Imap, alice: Mailbox
) -> None:
    def walk() -> dict[str, object]:
        c = imap.connect(alice)
        out: dict[str, object] = {}
        out["caps"] = c.capabilities
        typ, boxes = c.list()
        out["list"] = [b.decode() for b in boxes]
        typ, data = c.append("INBOX", r"(\Flagged)", imaplib.Time2Internaldate(1788000000), MESSAGE)
        out["append"] = (typ, data)
        typ, data = c.select("INBOX")
        out["select"] = (typ, data)
        typ, data = c.fetch("1", "(FLAGS RFC822.SIZE BODY.PEEK[])")
        out["fetch"] = data
        typ, data = c.store("1", "+FLAGS", r"(\Seen)")
        out["store"] = data
        typ, data = c.search(None, "SEEN", "FROM", "carol")
        out["search"] = data
        typ, data = c.create("Archive/2026")
        out["create"] = typ
        typ, data = c.uid("COPY", "1", "Archive/2026")
        out["copy"] = (typ, data)
        typ, data = c._simple_command("MOVE", "1", "Trash")
        out["move"] = (typ, c.response("EXPUNGE"))
        typ, data = c.status("Trash", "(MESSAGES UNSEEN UIDNEXT)")
        out["status"] = data
        c.logout()
        return out

    out = await run(walk)
    caps = out["caps"]
    assert isinstance(caps, tuple)
    assert {"IMAP4REV2", "IMAP4REV1", "IDLE", "UIDPLUS", "MOVE", "CONDSTORE"} <= set(caps)
    assert any(re.search(r'\\Sent.* "?Sent"?$', line) for line in out["list"])  # type: ignore[union-attr]
    assert any(line.endswith(" INBOX") for line in out["list"])  # type: ignore[union-attr]
    typ, data = out["append"]  # type: ignore[misc]
    assert typ == "OK" and re.search(rb"\[APPENDUID \d+ 1\]", data[0])
    typ, data = out["select"]  # type: ignore[misc]
    assert typ == "OK" and data == [b"1"]
    fetched = out["fetch"]
    assert fetched[0][1] == MESSAGE  # type: ignore[index]
    assert b"\\Flagged" in fetched[0][0] and b"RFC822.SIZE %d" % len(MESSAGE) in fetched[0][0]  # type: ignore[index]
    assert b"\\Seen" in out["store"][0]  # type: ignore[index]
    assert out["search"] == [b"1"]
    assert out["create"] == "OK"
    typ, data = out["copy"]  # type: ignore[misc]
    assert typ == "OK"
    typ, expunged = out["move"]  # type: ignore[misc]
    assert typ == "OK" and expunged[1] == [b"1"]
    assert re.match(rb'"?Trash"? \(MESSAGES 1 UNSEEN 0 UIDNEXT 2\)', out["status"][0])  # type: ignore[index]


async def test_append_over_the_quota_is_refused_and_getquotaroot_says_why(
    imap: Imap, alice: Mailbox, db: object
) -> None:
    await db.execute(  # type: ignore[attr-defined]
        "UPDATE mail.addresses SET quota_bytes = %s WHERE id = %s",
        (len(MESSAGE) + 10, alice.address_id),
    )

    def walk() -> tuple[object, object, object]:
        c = imap.connect(alice)
        first = c.append("INBOX", None, None, MESSAGE)
        try:
            second: object = c.append("INBOX", None, None, MESSAGE)
        except imaplib.IMAP4.error as exc:
            second = str(exc)
        quota = c.getquotaroot("INBOX")
        c.logout()
        return first, second, quota

    first, second, quota = await run(walk)
    assert first[0] == "OK"  # type: ignore[index]
    assert "OVERQUOTA" in str(second)
    # KiB, rounded up (RFC 9208 5.1): 1 used of a 1 KiB quota.
    assert quota[1][1] == [b'"" (STORAGE 1 1)']  # type: ignore[index]


async def test_deleting_a_folder_keeps_mail_that_is_also_elsewhere(
    imap: Imap, alice: Mailbox
) -> None:
    def walk() -> dict[str, object]:
        c = imap.connect(alice)
        out: dict[str, object] = {}
        c.create("Projects")
        c.append("INBOX", None, None, MESSAGE)
        c.append("Projects", None, None, MESSAGE.replace(b"lunch@", b"only-here@"))
        c.select("INBOX")
        c.copy("1", "Projects")
        out["projects"] = c.select("Projects")
        c.select("INBOX")
        out["delete"] = c.delete("Projects")
        out["lsub"] = c.lsub()
        out["inbox"] = c.status("INBOX", "(MESSAGES)")
        out["gone"] = c.select("Projects")
        c.logout()
        return out

    out = await run(walk)
    assert out["projects"] == ("OK", [b"2"])
    assert out["delete"][0] == "OK"  # type: ignore[index]
    assert not any(b"Projects" in line for line in out["lsub"][1])  # type: ignore[index]
    assert b"MESSAGES 1" in out["inbox"][1][0]  # type: ignore[index]
    assert out["gone"][0] == "NO"  # type: ignore[index]


async def test_aioimaplib_walk_append_uid_fetch_store_move(imap: Imap, alice: Mailbox) -> None:
    client = aioimaplib.IMAP4_SSL("127.0.0.1", imap.tls_port, ssl_context=client_tls(), timeout=10)
    await client.wait_hello_from_server()
    assert (await client.login(alice.email, alice.password)).result == "OK"
    assert (await client.append(MESSAGE, mailbox="INBOX", flags="(\\Draft)")).result == "OK"
    assert (await client.select("INBOX")).result == "OK"
    fetched = await client.uid("fetch", "1:*", "(UID FLAGS BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
    assert fetched.result == "OK"
    assert any(b"\\Draft" in line for line in fetched.lines if isinstance(line, bytes))
    assert any(
        b"Subject: Lunch?" in line for line in fetched.lines if isinstance(line, (bytes, bytearray))
    )
    stored = await client.uid("store", "1", "+FLAGS.SILENT", "(\\Answered)")
    assert stored.result == "OK"
    moved = await client.uid("move", "1", "Archive")
    assert moved.result == "OK" and any(b"COPYUID" in line for line in moved.lines)
    assert (await client.select("Archive")).result == "OK"
    search = await client.uid_search("ANSWERED")
    assert search.result == "OK" and search.lines[0] == b"1"
    await client.logout()


async def test_a_sessions_own_store_is_not_announced_again_but_anothers_is(
    imap: Imap, alice: Mailbox
) -> None:
    """Sync clients (offlineimap) take a repeated FETCH for news and trip over it."""

    def walk() -> tuple[list[Any], list[Any], list[Any]]:
        c, other = imap.connect(alice), imap.connect(alice)
        for n in range(3):
            c.append("INBOX", None, None, f"Subject: {n}\r\n\r\nbody {n}\r\n".encode())
        c.select("INBOX")
        other.select("INBOX")
        c.uid("STORE", "1:2", "+FLAGS", "(\\Flagged)")
        c.uid("STORE", "3", "+FLAGS.SILENT", "(\\Seen)")
        c.noop()
        own = c.untagged_responses.pop("FETCH", [])
        other.store("1", "+FLAGS", "(\\Answered)")
        c.noop()
        theirs = c.untagged_responses.pop("FETCH", [])
        other.noop()
        seen_by_other = other.untagged_responses.pop("FETCH", [])
        c.logout()
        other.logout()
        return own, theirs, seen_by_other

    own, theirs, seen_by_other = await run(walk)
    assert own == []
    assert theirs == [b"1 (UID 1 FLAGS (\\Answered \\Flagged))"]
    assert sorted(seen_by_other) == [
        b"2 (UID 2 FLAGS (\\Flagged))",
        b"3 (UID 3 FLAGS (\\Seen))",
    ]
