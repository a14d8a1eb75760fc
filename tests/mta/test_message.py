"""Header fields the store keeps, from real-world shaped messages."""

from __future__ import annotations

from datetime import UTC, datetime

from mta.message import parse_message


def test_encoded_words_addresses_date_and_references() -> None:
    parsed = parse_message(
        b"From: =?utf-8?q?J=C3=B6rg?= <jorg@example.test>, ann@example.test\r\n"
        b"To: Team <team@example.test>\r\nCc: =?iso-8859-1?q?Andr=E9?= <andre@example.test>\r\n"
        b"Subject: =?utf-8?b?0J/RgNC40LLQtdGC?= world\r\n"
        b"Message-ID: <m3@example.test>\r\nIn-Reply-To: <m2@example.test>\r\n"
        b"References: <m1@example.test>\r\n <m2@example.test>\r\n"
        b"Date: Thu, 01 Jan 2026 10:00:00 +0100\r\n\r\nbody\r\n"
    )
    assert parsed.subject == "Привет world"
    assert parsed.from_addrs == [
        {"name": "Jörg", "email": "jorg@example.test"},
        {"name": "", "email": "ann@example.test"},
    ]
    assert parsed.cc_addrs == [{"name": "André", "email": "andre@example.test"}]
    assert parsed.thread_keys == ["m3@example.test", "m2@example.test", "m1@example.test"]
    assert parsed.sent_at == datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


def test_preview_prefers_plain_text_and_sees_attachments() -> None:
    parsed = parse_message(
        b"Subject: parts\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
        b"--b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n<p>Hello <b>there</b></p>\r\n"
        b"--b\r\nContent-Type: text/plain; charset=iso-8859-1\r\n"
        b"Content-Transfer-Encoding: quoted-printable\r\n\r\nCaf=E9   au\r\n  lait\r\n"
        b"--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=a.pdf\r\n\r\n"
        b"JVBERi0=\r\n--b--\r\n"
    )
    assert parsed.preview == "Café au lait"
    assert parsed.has_attachment


def test_html_only_preview_and_garbage_never_raise() -> None:
    html = parse_message(
        b"Content-Type: text/html\r\n\r\n<html><body><h1>Big</h1> news</body></html>\r\n"
    )
    assert html.preview == "Big news"
    garbage = parse_message(b"\x00\xff not a message at all")
    assert garbage.subject == "" and garbage.message_id is None and garbage.sent_at is None
