"""How source folders, flags and FETCH answers of other servers map here (no server needed).

The LIST lines are what Gmail, Courier-style servers (``INBOX.`` prefix, ``.``
delimiter), Exchange-like names without SPECIAL-USE and Dovecot send.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from mail.transfers.imap import (
    decode_utf7,
    keywords_of,
    parse_infos,
    parse_list,
    plan_folders,
)


def plan(lines: list[bytes]) -> list[tuple[str, str | None, str]]:
    return [(p.source.name, p.role, p.path) for p in plan_folders(parse_list(lines))]


def test_gmail_special_use_virtual_folders_and_all_mail_last():
    got = plan(
        [
            b'(\\HasNoChildren) "/" "INBOX"',
            b'(\\HasChildren \\Noselect) "/" "[Gmail]"',
            b'(\\All \\HasNoChildren) "/" "[Gmail]/All Mail"',
            b'(\\Drafts \\HasNoChildren) "/" "[Gmail]/Drafts"',
            b'(\\HasNoChildren \\Important) "/" "[Gmail]/Important"',
            b'(\\HasNoChildren \\Sent) "/" "[Gmail]/Sent Mail"',
            b'(\\HasNoChildren \\Junk) "/" "[Gmail]/Spam"',
            b'(\\Flagged \\HasNoChildren) "/" "[Gmail]/Starred"',
            b'(\\HasNoChildren \\Trash) "/" "[Gmail]/Trash"',
            b'(\\HasNoChildren) "/" "Receipts"',
        ]
    )
    assert got == [
        ("INBOX", "inbox", "Inbox"),
        ("[Gmail]/Drafts", "drafts", "Drafts"),
        ("[Gmail]/Sent Mail", "sent", "Sent"),
        ("[Gmail]/Spam", "junk", "Junk"),
        ("[Gmail]/Trash", "trash", "Trash"),
        ("Receipts", None, "Receipts"),
        # Imported last, into the archive: what it adds is only the archived mail.
        ("[Gmail]/All Mail", "archive", "Archive"),
    ]


def test_courier_prefix_and_names_without_special_use():
    got = plan(
        [
            b'(\\HasChildren) "." INBOX',
            b'(\\HasNoChildren) "." INBOX.Sent',
            b'(\\HasNoChildren) "." "INBOX.Deleted Items"',
            b'(\\HasNoChildren) "." INBOX.spam',
            b'(\\HasNoChildren) "." INBOX.Work.2024',
            b'(\\HasNoChildren) "." "INBOX.a/b"',
        ]
    )
    assert got == [
        ("INBOX", "inbox", "Inbox"),
        ("INBOX.Sent", "sent", "Sent"),
        ("INBOX.Deleted Items", "trash", "Trash"),
        ("INBOX.spam", "junk", "Junk"),
        ("INBOX.Work.2024", None, "Work/2024"),  # hierarchy kept, our separator
        ("INBOX.a/b", None, "a-b"),  # a "/" inside a name is not a level here
    ]


def test_special_use_wins_over_a_name_and_each_role_is_taken_once():
    got = plan(
        [
            b'(\\HasNoChildren) "/" INBOX',
            b'(\\HasNoChildren) "/" Sent',  # a name only
            b'(\\HasNoChildren \\Sent) "/" "Sent Items"',  # the attribute says this one
            b'(\\HasNoChildren \\Sent) "/" "Sent 2"',  # the role is taken: by name
        ]
    )
    assert got == [
        ("INBOX", "inbox", "Inbox"),
        ("Sent", None, "Sent"),
        ("Sent Items", "sent", "Sent"),
        ("Sent 2", None, "Sent 2"),
    ]


def test_modified_utf7_names():
    assert decode_utf7("Entw&APw-rfe") == "Entwürfe"
    assert decode_utf7("&ZeVnLIqe-") == "日本語"
    assert decode_utf7("Tom &- Jerry") == "Tom & Jerry"
    [folder] = parse_list([b'(\\HasNoChildren \\Drafts) "/" Entw&APw-rfe'])
    assert (folder.raw, folder.name, folder.delimiter) == ("Entw&APw-rfe", "Entwürfe", "/")
    [quoted] = parse_list([b'(\\HasNoChildren) NIL "say \\"hi\\""'])
    assert (quoted.name, quoted.delimiter) == ('say "hi"', None)


def test_flags_become_keywords():
    assert keywords_of(["\\Seen", "\\Flagged", "\\Answered", "\\Draft"]) == (
        "$answered",
        "$draft",
        "$flagged",
        "$seen",
    )
    # \Deleted and \Recent are dropped; keywords kept lower-cased; invalid ones dropped.
    assert keywords_of(["\\Deleted", "\\Recent", "$Forwarded", "NonJunk", "bad(kw"]) == (
        "$forwarded",
        "nonjunk",
    )


def test_fetch_metadata_lines():
    lines = [
        b'1 FETCH (UID 7 FLAGS (\\Seen $Label1) INTERNALDATE " 4-Mar-2021 10:30:00 +0100"'
        b" RFC822.SIZE 1234)",
        b'2 FETCH (FLAGS () UID 9 RFC822.SIZE 50 INTERNALDATE "17-Jul-1996 02:44:25 -0700")',
        b"Fetch completed (0.001 + 0.000 secs).",
    ]
    infos = parse_infos(lines, after_uid=0)
    assert [(i.uid, i.size, i.keywords) for i in infos] == [
        (7, 1234, ("$label1", "$seen")),
        (9, 50, ()),
    ]
    assert infos[0].internal_date == datetime(2021, 3, 4, 9, 30, tzinfo=UTC)
    assert infos[1].internal_date == datetime(
        1996, 7, 17, 2, 44, 25, tzinfo=timezone(timedelta(hours=-7))
    )
    # "n:*" past the last UID names the last message: it is not new.
    assert parse_infos(lines, after_uid=9) == []


def test_fetch_metadata_with_the_message_id_literal_in_either_order():
    lines = [
        b"1 FETCH (UID 3 RFC822.SIZE 10 FLAGS () BODY[HEADER.FIELDS (MESSAGE-ID)] {25}",
        bytearray(b"Message-ID: <a@b.example>"),
        b")",
        b"2 FETCH (BODY[HEADER.FIELDS (MESSAGE-ID)] {2}",
        bytearray(b"\r\n"),
        b' UID 4 FLAGS (\\Seen) RFC822.SIZE 20 INTERNALDATE "01-Jan-2020 00:00:00 +0000")',
        b"Fetch completed.",
    ]
    infos = parse_infos(lines, after_uid=0)
    assert [(i.uid, i.size, i.keywords, i.head) for i in infos] == [
        (3, 10, (), b"Message-ID: <a@b.example>"),
        (4, 20, ("$seen",), b"\r\n"),
    ]
