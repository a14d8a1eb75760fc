"""One email of a send request: field checks, scheduled_at, and the MIME built from it."""

from __future__ import annotations

import email
from datetime import UTC, datetime, timedelta
from email.policy import default as default_policy

import pytest

from mail.errors import MailError
from mail.sending import fields, mime, schedule

NOW = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
BASE = {"from": "hello@example.com", "to": "ann@example.org", "subject": "Hi", "text": "x"}


def parsed(raw: bytes) -> email.message.EmailMessage:
    return email.message_from_bytes(raw, policy=default_policy)  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("in 1 min", NOW + timedelta(minutes=1)),
        ("in 10 minutes", NOW + timedelta(minutes=10)),
        ("In An Hour", NOW + timedelta(hours=1)),
        ("in 2 days", NOW + timedelta(days=2)),
        ("in 1 week", NOW + timedelta(weeks=1)),
        ("2030-01-02T09:00:00Z", datetime(2030, 1, 2, 9, tzinfo=UTC)),
        ("2030-01-02T11:00:00+02:00", datetime(2030, 1, 2, 9, tzinfo=UTC)),
        ("2030-01-02T09:00:00", datetime(2030, 1, 2, 9, tzinfo=UTC)),  # no offset: UTC
    ],
)
def test_scheduled_at_forms(text, expected):
    assert schedule.parse(text, NOW) == expected


@pytest.mark.parametrize(
    "text",
    [
        "tomorrow at 9am",
        "in 0 minutes",
        "in 5 fortnights",
        "2029-12-31T00:00:00Z",
        "in 31 days",
        "",
        5,
    ],
)
def test_scheduled_at_refusals_are_422_validation_error(text):
    with pytest.raises(MailError) as refused:
        schedule.parse(text, NOW)
    assert (refused.value.status, refused.value.name) == (422, "validation_error")


def test_addresses_are_read_in_both_forms_and_recipients_counted_once():
    draft = fields.draft(
        {
            **BASE,
            "from": '"Acme, Inc." <Hello@Example.COM>',
            "to": ["Ann <ann@example.org>", "bob@example.org"],
            "cc": "ANN@example.org",
            "bcc": ["bob@example.org", "carl@example.org"],
        },
        NOW,
    )
    assert str(draft.sender) == '"Acme, Inc." <Hello@example.com>'
    assert fields.mailbox(str(draft.sender), "from") == draft.sender  # reads back
    assert draft.sender.domain == "example.com"
    assert draft.recipients == ["ann@example.org", "bob@example.org", "carl@example.org"]


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"from": "Acme <not-an-address>"}, "invalid_from_address"),
        ({"from": "a@b.com\r\nBcc: x@y.com"}, "invalid_from_address"),
        ({"to": "ann@example.org\nBcc: x@y.com"}, "validation_error"),
        ({"cc": ["ok@example.org", 5]}, "validation_error"),
        ({"subject": "two\r\nlines"}, "validation_error"),
        ({"headers": {"Bad Name": "x"}}, "validation_error"),
        ({"headers": {"X-Ok": "line\r\nInjected: yes"}}, "validation_error"),
        ({"headers": {"dkim-signature": "v=1"}}, "validation_error"),
        ({"tags": [{"name": "ok", "value": "not ok!"}]}, "validation_error"),
        ({"attachments": [{"content": "aGk="}]}, "invalid_attachment"),
        (
            {"attachments": [{"filename": "a", "path": "https://example.org/a"}]},
            "invalid_attachment",
        ),
        ({"attachments": [{"filename": "a", "content": [1, 300]}]}, "invalid_attachment"),
        ({"cc": [f"c{i}@example.org" for i in range(100)]}, "validation_error"),
    ],
)
def test_refusals_name_the_field(change, name):
    with pytest.raises(MailError) as refused:
        fields.draft({**BASE, **change}, NOW)
    assert (refused.value.status, refused.value.name) == (422, name)


def test_the_message_has_the_fields_and_bcc_only_in_the_envelope():
    draft = fields.draft(
        {
            **BASE,
            "from": "Ünïcode Shop <shop@example.com>",
            "to": ["Ann <ann@example.org>"],
            "bcc": "boss@example.net",
            "reply_to": ["help@example.com", "desk@example.com"],
            "subject": "Grüße",
            "html": '<p>Hi <img src="cid:logo"></p>',
            "text": "Hi",
            "headers": {"List-Unsubscribe": "<https://example.com/u>"},
            "attachments": [
                {"filename": "logo.png", "content": "iVBORw0KGgo=", "content_id": "logo"},
                {"filename": "terms.pdf", "content": "JVBERi0=", "content_type": "application/pdf"},
            ],
        },
        NOW,
    )
    raw = mime.build("1f0c", draft, NOW)
    assert b"\r\n" in raw and b"\n\n" not in raw.replace(b"\r\n", b"")
    msg = parsed(raw)
    assert msg["From"] == "Ünïcode Shop <shop@example.com>"
    assert msg["Subject"] == "Grüße"
    assert msg["Reply-To"] == "help@example.com, desk@example.com"
    assert msg["Message-ID"] == "<1f0c@example.com>"
    assert msg["List-Unsubscribe"] == "<https://example.com/u>"
    assert msg["Bcc"] is None and b"boss@example.net" not in raw
    assert "boss@example.net" in draft.recipients
    body = msg.get_body(("plain",))
    assert body is not None and body.get_content().strip() == "Hi"
    html = msg.get_body(("html",))
    assert html is not None and "cid:logo" in html.get_content()
    parts = {p.get_filename(): p for p in msg.iter_attachments()}
    assert parts["logo.png"]["Content-ID"] == "<logo>"
    assert parts["logo.png"].get_content_disposition() == "inline"
    assert parts["terms.pdf"].get_content_type() == "application/pdf"
    assert parts["terms.pdf"].get_content() == b"%PDF-"


def test_html_only_message():
    msg = parsed(
        mime.build("x", fields.draft({**BASE, "text": None, "html": "<b>hi</b>"}, NOW), NOW)
    )
    assert msg.get_content_type() == "text/html"
