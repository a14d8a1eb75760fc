"""The cached ENVELOPE and BODYSTRUCTURE (mta.imap_cache): what a FETCH rendered
once is what every later FETCH sends, byte for byte, and it goes with the email."""

from __future__ import annotations

from typing import Any

import pytest

from mta.imap import fetch, mime
from mta.store import imap_uids
from tests.mta.imap.conftest import Imap, Mailbox, Raw, run
from tests.mta.imap.shared import module_alice, module_db, module_imap  # noqa: F401

# One daemon for the module; each test signs in as a mailbox of its own.
pytestmark = pytest.mark.asyncio(loop_scope="module")

MULTIPART = (
    b'From: "Dupont, Ren\xc3\xa9" <rene@remote.test>\r\n'
    b"To: alice@example.test, =?utf-8?q?B=C3=A9a?= <bea@example.test>\r\n"
    b"Cc: carol@remote.test\r\nReply-To: list@remote.test\r\n"
    b"Subject: =?utf-8?q?Rapport_=C3=A9t=C3=A9?=\r\nDate: Mon, 2 Nov 2026 10:00:00 +0000\r\n"
    b"Message-ID: <cache-1@remote.test>\r\nIn-Reply-To: <cache-0@remote.test>\r\n"
    b"MIME-Version: 1.0\r\n"
    b'Content-Type: multipart/mixed; boundary="b1"\r\n\r\n'
    b"--b1\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nHello \xc3\xa9t\xc3\xa9\r\n"
    b"--b1\r\nContent-Type: application/pdf; name=r.pdf\r\n"
    b"Content-Transfer-Encoding: base64\r\n"
    b'Content-Disposition: attachment; filename="r.pdf"\r\n\r\nJVBERi0xLjQK\r\n'
    b"--b1--\r\n"
)
PLAIN = (
    b"From: Bob <bob@remote.test>\r\nTo: alice@example.test\r\nSubject: plain\r\n"
    b"Message-ID: <cache-2@remote.test>\r\n\r\nJust text.\r\n"
)
LISTING = b"UID FETCH 1:* (FLAGS ENVELOPE BODYSTRUCTURE)"


def _session(imap: Imap, user: Mailbox, *commands: bytes) -> list[list[bytes]]:
    """Each command's response lines (literals included, byte for byte)."""
    r = Raw(imap.tls_port)
    r.send(b'a LOGIN %s "%s"\r\n' % (user.email.encode(), user.password.encode()))
    r.until(b"a")
    out = []
    for n, command in enumerate(commands):
        tag = b"t%d" % n
        r.send(tag + b" " + command + b"\r\n")
        out.append(r.until(tag))
    # A FETCH's cache write may still run after its OK; the session's next
    # command (here LOGOUT) is answered only once it is done.
    r.send(b"z LOGOUT\r\n")
    r.until(b"z")
    r.close()
    return out


def _append(body: bytes) -> bytes:
    return b"APPEND INBOX {%d+}\r\n" % len(body) + body


async def _cache(db: Any, user: Mailbox) -> dict[str, dict[str, Any]]:
    rows = await db.fetch_all(
        "SELECT c.email_id::text AS id, c.envelope, c.bodystructure FROM mta.imap_cache c"
        " JOIN mta.emails e ON e.id = c.email_id WHERE e.address_id = %s",
        (user.address_id,),
    )
    return {r["id"]: r for r in rows}


async def test_cached_forms_are_the_fresh_ones_and_later_fetches_identical(
    imap: Imap, alice: Mailbox, db: Any
) -> None:
    [*_, cold, warm, envelope_only] = await run(
        _session,
        imap,
        alice,
        _append(MULTIPART),
        _append(PLAIN),
        b"EXAMINE INBOX",
        LISTING,
        LISTING,
        b"UID FETCH 1:* (ENVELOPE)",
    )
    assert cold[-1].startswith(b"t3 OK")
    assert b"BODYSTRUCTURE" in b"".join(cold)
    # The second listing is served from the cache: the very same bytes.
    assert warm[:-1] == cold[:-1]
    cached = await _cache(db, alice)
    assert len(cached) == 2
    # What was cached is what the renderer builds now from the stored message.
    async with db.connection() as conn:
        rows = await imap_uids.message_rows(conn, alice.address_id, list(cached), with_header=True)
    for email_id, entry in cached.items():
        raw = MULTIPART if rows[email_id].subject != "plain" else PLAIN
        envelope = fetch.envelope_of(fetch.split_head(raw)[0])
        assert bytes(entry["envelope"]) == envelope
        assert bytes(entry["bodystructure"]) == fetch.bodystructure(raw, mime.walk(raw))
        assert b"ENVELOPE " + envelope in b"".join(cold)
        assert b"ENVELOPE " + envelope in b"".join(envelope_only)


async def test_each_form_is_cached_when_first_asked_for(
    imap: Imap, alice: Mailbox, db: Any
) -> None:
    await run(_session, imap, alice, _append(PLAIN), b"EXAMINE INBOX", b"FETCH 1 (ENVELOPE)")
    [entry] = (await _cache(db, alice)).values()
    assert entry["envelope"] is not None and entry["bodystructure"] is None
    [*_, structure, both] = await run(
        _session, imap, alice, b"EXAMINE INBOX", b"FETCH 1 (BODYSTRUCTURE)", b"FETCH 1 (BODY)"
    )
    [entry] = (await _cache(db, alice)).values()
    assert bytes(entry["bodystructure"]) == fetch.bodystructure(PLAIN, mime.walk(PLAIN))
    assert b"BODYSTRUCTURE " + bytes(entry["bodystructure"]) in b"".join(structure)
    # BODY (the non-extended form) is not the cached one.
    assert b"BODY " + fetch.bodystructure(PLAIN, mime.walk(PLAIN), extended=False) in b"".join(both)


async def test_an_expunged_email_takes_its_cache_row_with_it(
    imap: Imap, alice: Mailbox, db: Any
) -> None:
    await run(_session, imap, alice, _append(PLAIN), _append(MULTIPART), b"SELECT INBOX", LISTING)
    assert len(await _cache(db, alice)) == 2
    [*_, expunged] = await run(
        _session,
        imap,
        alice,
        b"SELECT INBOX",
        b"UID STORE 1 +FLAGS.SILENT (\\Deleted)",
        b"EXPUNGE",
    )
    assert expunged[0] == b"* 1 EXPUNGE\r\n"
    assert len(await _cache(db, alice)) == 1
    emails = "SELECT count(*) FROM mta.emails WHERE address_id = %s"
    assert await db.fetch_val(emails, (alice.address_id,)) == 1


async def test_a_flags_resync_says_what_the_general_path_says(imap: Imap, alice: Mailbox) -> None:
    [*_, resync, general] = await run(
        _session,
        imap,
        alice,
        _append(PLAIN),
        _append(MULTIPART),
        b"SELECT INBOX",
        b"UID STORE 2 +FLAGS.SILENT (\\Seen \\Flagged $label)",
        b"UID FETCH 1:* (FLAGS)",  # the resync's own line format
        b"UID FETCH 1:* (FLAGS UID)",  # the same items through the general path
    )
    assert resync[:-1] == [
        b"* 1 FETCH (UID 1 FLAGS ())\r\n",
        b"* 2 FETCH (UID 2 FLAGS (\\Flagged $label \\Seen))\r\n",
    ]
    assert general[:-1] == [
        b"* 1 FETCH (FLAGS () UID 1)\r\n",
        b"* 2 FETCH (FLAGS (\\Flagged $label \\Seen) UID 2)\r\n",
    ]
