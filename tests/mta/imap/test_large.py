"""Mail over 256 KiB (kept in the blob store, not inline) over IMAP: appended and fetched whole."""

from __future__ import annotations

import imaplib
from dataclasses import replace

import pytest

from mta.settings import MtaSettings
from tests.mta.imap.conftest import Imap, Mailbox, run


@pytest.fixture
def imap_config(imap_config: MtaSettings) -> MtaSettings:
    """Room for a message past the 256 KiB kept inline (the suite's limit is 200 KB)."""
    return replace(imap_config, max_message_size=2_000_000)


def large_message(size: int) -> bytes:
    head = (
        b"From: Carol <carol@remote.test>\r\n"
        b"To: alice@example.test\r\n"
        b"Subject: The photos\r\n"
        b"Date: Tue, 01 Sep 2026 10:00:00 +0000\r\n"
        b"Message-ID: <photos@remote.test>\r\n"
        b"\r\n"
    )
    line = b"x" * 76 + b"\r\n"
    return head + line * (size // len(line))


async def test_a_message_over_the_inline_size_is_appended_and_fetched_byte_for_byte(
    imap: Imap, alice: Mailbox
) -> None:
    big = large_message(1_400_000)

    def walk() -> tuple[bytes, bytes]:
        c = imap.connect(alice)
        typ, data = c.append("INBOX", None, imaplib.Time2Internaldate(1788000000), big)
        assert typ == "OK", data
        c.select("INBOX")
        typ, fetched = c.uid("FETCH", "*", "(RFC822.SIZE BODY.PEEK[])")
        assert typ == "OK", fetched
        c.logout()
        head, body = fetched[0]  # type: ignore[misc]
        return head, body

    head, body = await run(walk)
    assert b"RFC822.SIZE %d" % len(big) in head
    assert body == big
