"""Forwarded mail through the daemon, with imaplib: a forward's BODYSTRUCTURE
shows the message inside (RFC 9051 7.5.2), its sections are the message's
own octets (RFC 9051 6.4.5), the cached form is the one sent; and Dovecot,
the server a user would pick instead, answers the same for the same mail
(the deliberate differences are in docs/mail.md, IMAP choices)."""

from __future__ import annotations

import functools
import imaplib
from collections.abc import Callable
from typing import Any

import pytest

from tests.mail import imap_server
from tests.mta.imap import forwarded
from tests.mta.imap.conftest import Imap, Mailbox, run
from tests.mta.imap.forwarded import Data, append_as_is, fetched, fold_case
from tests.mta.imap.shared import module_alice, module_db, module_imap  # noqa: F401

pytestmark = pytest.mark.asyncio(loop_scope="module")

ORIGINAL = forwarded.ORIGINAL_HTML
ORIGINAL_HEAD, ORIGINAL_TEXT = ORIGINAL.split(b"\r\n\r\n", 1)
PLAIN_PART = b"Hi Bob,\r\n\r\nthe draft is attached below. \r\nNumbers are rough.\r\n\r\nAnn\r\n"
SECTIONS = "BODY.PEEK[2] BODY.PEEK[2.MIME] BODY.PEEK[2.HEADER] BODY.PEEK[2.TEXT] BODY.PEEK[2.1]"


async def test_the_daemon_sends_a_forwards_parts_and_caches_its_structure(
    imap: Imap, alice: Mailbox, db: Any
) -> None:
    def session() -> tuple[dict[bytes, Data], dict[bytes, Data]]:
        c = imap.connect(alice)
        assert c.append("INBOX", None, None, forwarded.THUNDERBIRD)[0] == "OK"
        c.select("INBOX", readonly=True)
        first = fetched(c.fetch("1", f"(BODYSTRUCTURE {SECTIONS})")[1])
        again = fetched(c.fetch("1", "(BODYSTRUCTURE)")[1])  # from mta.imap_cache
        c.logout()
        return first, again

    first, again = await run(session)
    # The sections: the forwarded message's octets as Thunderbird sent them.
    assert first[b"BODY[2]"] == ORIGINAL
    assert first[b"BODY[2.HEADER]"] == ORIGINAL_HEAD + b"\r\n\r\n"
    assert first[b"BODY[2.TEXT]"] == ORIGINAL_TEXT
    assert first[b"BODY[2.1]"] == PLAIN_PART
    assert first[b"BODY[2.MIME]"] == (
        b'Content-Type: message/rfc822; charset=UTF-8;\r\n name="Quarterly numbers - draft.eml"\r\n'
        b'Content-Disposition: attachment; filename="Quarterly numbers - draft.eml"\r\n\r\n'
    )
    # BODYSTRUCTURE: part 2 is the message, with its ENVELOPE, structure and lines.
    structure = first[b"BODYSTRUCTURE"]
    assert isinstance(structure, list) and isinstance(structure[1], list)
    message = structure[1]
    assert message[:7] == [
        b"MESSAGE",
        b"RFC822",
        [b"CHARSET", b"UTF-8", b"NAME", b"Quarterly numbers - draft.eml"],
        None,
        None,
        b"7BIT",
        len(ORIGINAL),
    ]
    envelope, inner, lines = message[7:10]
    assert isinstance(envelope, list) and isinstance(inner, list)
    assert envelope[1] == b"=?UTF-8?Q?Quarterly_numbers_=E2=80=93_draft?="
    assert envelope[9] == b"<0a1b2c3d-4e5f@remote.test>"
    assert [p[:2] for p in inner[:2] if isinstance(p, list)] == [
        [b"TEXT", b"PLAIN"],
        [b"TEXT", b"HTML"],
    ]
    assert inner[2] == b"ALTERNATIVE"
    assert isinstance(inner[0], list) and inner[0][6:8] == [
        len(PLAIN_PART),
        PLAIN_PART.count(b"\n"),
    ]
    assert lines == ORIGINAL.count(b"\n")
    # Cached when first rendered, and sent from the cache the same.
    assert again[b"BODYSTRUCTURE"] == structure
    cached = await db.fetch_val(
        "SELECT c.bodystructure FROM mta.imap_cache c JOIN mta.emails e ON e.id = c.email_id"
        " WHERE e.address_id = %s",
        (alice.address_id,),
    )
    assert bytes(cached).startswith(b'(("TEXT" "PLAIN" ("CHARSET" "UTF-8" "FORMAT" "flowed")')
    assert (
        b'("MESSAGE" "RFC822" ("CHARSET" "UTF-8" "NAME" "Quarterly numbers - draft.eml")'
        in bytes(cached)
    )


# -- next to Dovecot ---------------------------------------------------------------


def _answers(
    connect: Callable[[], imaplib.IMAP4], messages: dict[str, bytes], sections: dict[str, list[str]]
) -> dict[str, dict[bytes, Data]]:
    """BODYSTRUCTURE, BODY and the listed sections of each message, appended
    to a fresh mailbox and fetched with imaplib."""
    c = connect()
    folder = "Forwards"
    assert c.create(folder)[0] == "OK"
    for raw in messages.values():
        append_as_is(c, folder, raw)
    c.select(folder, readonly=True)
    out = {}
    for n, (name, _) in enumerate(messages.items(), 1):
        items = " ".join(f"BODY.PEEK[{s}]" for s in sections[name])
        out[name] = fetched(c.fetch(str(n), f"(BODYSTRUCTURE BODY {items})")[1])
    c.logout()
    return out


def _dovecot_answers(
    messages: dict[str, bytes], sections: dict[str, list[str]]
) -> dict[str, dict[bytes, Data]]:
    for server in imap_server.running():
        server.add_user("ann", "password")
        return _answers(functools.partial(server.connect, "ann"), messages, sections)
    raise AssertionError("no server")


def _need_dovecot() -> None:
    if not imap_server.available():
        pytest.skip("dovecot is not installed (make imap-server installs it)")


CRLF_MESSAGES = {**forwarded.MESSAGES, **forwarded.EDGES}
CRLF_MESSAGES.pop("mixed line ends")
CRLF_SECTIONS = {**forwarded.SECTIONS, **forwarded.EDGE_SECTIONS}


async def test_dovecot_sends_the_same_structures_and_octets(imap: Imap, alice: Mailbox) -> None:
    # Thunderbird's, Apple Mail's and Outlook's forwards, a digest, a forward
    # of a forward, cut-off and odd MIME: every section byte for byte, and
    # BODY and BODYSTRUCTURE alike but for case where RFC 9051 ignores it
    # (we upper-case types, encodings and parameter names, as its examples do).
    _need_dovecot()
    ours = await run(_answers, lambda: imap.connect(alice), CRLF_MESSAGES, CRLF_SECTIONS)
    theirs = await run(_dovecot_answers, CRLF_MESSAGES, CRLF_SECTIONS)
    for name in CRLF_MESSAGES:
        mine, dovecot = ours[name], theirs[name]
        assert mine.keys() == dovecot.keys(), name
        for item, value in dovecot.items():
            if item in (b"BODYSTRUCTURE", b"BODY"):
                assert fold_case(mine[item]) == fold_case(value), (name, item)
            else:
                assert mine[item] == value, (name, item)


async def test_lf_only_mail_differs_from_dovecot_only_in_line_ends(
    imap: Imap, alice: Mailbox
) -> None:
    # Dovecot sends CRLF for a stored LF and counts a CR for each in its
    # sizes; we send and count the octets as stored (docs/mail.md).
    _need_dovecot()
    messages = {"lf": forwarded.LF_ONLY, "mixed line ends": forwarded.EDGES["mixed line ends"]}
    sections = {"lf": forwarded.SECTIONS["nested"], **forwarded.EDGE_SECTIONS}
    ours = await run(_answers, lambda: imap.connect(alice), messages, sections)
    theirs = await run(_dovecot_answers, messages, sections)
    differ = 0
    for name in messages:
        mine, dovecot = ours[name], theirs[name]
        for item, value in dovecot.items():
            sent = mine[item]
            if item in (b"BODYSTRUCTURE", b"BODY"):
                assert fold_case(sent, sizes=False) == fold_case(value, sizes=False)
                differ += fold_case(sent) != fold_case(value)
            else:
                assert isinstance(value, bytes) and isinstance(sent, bytes)
                assert sent.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n") == value, (name, item)
                differ += sent != value
    assert differ > 10  # the LF sections and the sizes
