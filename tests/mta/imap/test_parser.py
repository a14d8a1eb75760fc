"""The command grammar on RFC 9051's (and RFC 7162's, 7888's) own examples."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mta.imap import parser
from mta.imap.parser import Atom, Command, ParseError, String, Tokens, parse_head


def items(line: bytes, *literals: bytes) -> tuple[str, str, list[object]]:
    tag, name, toks = parse_head(Command.of(line, *literals))
    rest: list[object] = []
    if not toks.at_end:
        toks.sp()
        rest = list(toks.items())
    return tag, name, rest


def test_rfc9051_examples_parse_into_their_items() -> None:
    assert items(b"a002 NOOP") == ("a002", "NOOP", [])
    assert items(b"A142 SELECT INBOX") == ("A142", "SELECT", [Atom("INBOX")])
    assert items(b'A682 LIST "" *') == ("A682", "LIST", [String(b""), Atom("*")])
    assert items(b"A042 STATUS blurdybloop (UIDNEXT MESSAGES)")[2] == [
        Atom("blurdybloop"),
        [Atom("UIDNEXT"), Atom("MESSAGES")],
    ]
    # 6.4.5: a section with a field list is one item.
    _, _, rest = items(b"a003 fetch 12 (flags body[header.fields (date from)])")
    assert rest == [Atom("12"), [Atom("flags"), Atom("body[header.fields (date from)]")]]
    # 6.3.12 APPEND with a synchronizing literal; RFC 7888 a non-synchronizing one.
    msg = b"Date: Mon, 7 Feb 1994 21:52:25 -0800 (PST)\r\n\r\nHello Joe\r\n"
    _, _, rest = items(b"A003 APPEND saved-messages (\\Seen) {%d}\r\n" % len(msg), msg)
    assert rest == [Atom("saved-messages"), [Atom("\\Seen")], String(msg, literal=True)]
    _, _, rest = items(b"A004 APPEND saved {%d+}\r\n" % len(msg), msg)
    assert rest[-1] == String(msg, literal=True)
    # Quoted strings with their two escapes.
    _, _, rest = items(b'a LOGIN "fred \\"x\\"" "pass\\\\word"')
    assert rest == [String(b'fred "x"'), String(b"pass\\word")]


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"+tag NOOP",
        b"a1",
        b'a1 LOGIN "open',
        b"a1 LIST (a b",
        b'a1 LOGIN "a\\x" b',
        b"a1 X {5}",
    ],
)
def test_malformed_commands_are_parse_errors(line: bytes) -> None:
    with pytest.raises(ParseError):
        _tag, _name, toks = parse_head(Command.of(line))
        if not toks.at_end:
            toks.sp()
            toks.items()


def test_sequence_sets_and_uid_sets() -> None:
    s = parser.sequence_set("2,4:7,9,12:*")
    assert list(s.resolve(15)) == [(2, 2), (4, 7), (9, 9), (12, 15)]
    assert parser.sequence_set("*:4").contains(10, 10)
    assert parser.sequence_set("$").saved
    for bad in ("0", "1:", "a", "1,,2", "4294967296"):
        with pytest.raises(ParseError):
            parser.sequence_set(bad)
    assert parser.format_uid_set([1, 2, 3, 7, 9, 10]) == "1:3,7,9:10"


def test_fetch_attributes_sections_and_partials() -> None:
    atts = parser.fetch_atts(
        Tokens(
            Command.of(b"(FLAGS BODY.PEEK[1.2.MIME] BODY[]<0.2048> BINARY[2] RFC822.SIZE)")
        ).item()
    )
    assert atts[0] == "FLAGS" and atts[-1] == "RFC822.SIZE"
    mime, whole, binary = atts[1], atts[2], atts[3]
    assert (
        isinstance(mime, parser.Section)
        and mime.peek
        and mime.part == (1, 2)
        and mime.kind == "MIME"
    )
    assert (
        isinstance(whole, parser.Section)
        and whole.partial == (0, 2048)
        and whole.label() == "BODY[]<0>"
    )
    assert isinstance(binary, parser.Section) and binary.name == "BINARY"
    fields = parser.section("BODY.PEEK[HEADER.FIELDS (From Subject)]")
    assert (
        fields.fields == ("FROM", "SUBJECT")
        and fields.label() == "BODY[HEADER.FIELDS (FROM SUBJECT)]"
    )
    assert parser.fetch_atts(Atom("ALL")) == ["FLAGS", "INTERNALDATE", "RFC822.SIZE", "ENVELOPE"]
    for bad in ("BODY[0]", "BODY[HEADER.FIELDS]", "BINARY[HEADER]", "BODY[MIME]", "XYZ"):
        with pytest.raises(ParseError):
            parser.section(bad)


def test_search_keys_from_rfc9051_examples() -> None:
    def keys(line: bytes) -> parser.Key:
        toks = Tokens(Command.of(line))
        return parser.search_keys(toks.items())

    k = keys(b'FLAGGED SINCE 1-Feb-1994 NOT FROM "Smith"')
    assert k == parser.Key(
        "AND",
        (
            parser.Key("FLAGGED"),
            parser.Key("SINCE", (datetime(1994, 2, 1, tzinfo=UTC),)),
            parser.Key("NOT", (parser.Key("FROM", (b"Smith",)),)),
        ),
    )
    assert keys(b"OR SEEN (UID 1:5 LARGER 100)").name == "OR"
    assert keys(b"MODSEQ 620162338").args == (620162338,)
    with pytest.raises(ParseError):
        keys(b"FROM")
    with pytest.raises(ParseError):
        keys(b"SINCE 31-Foo-2020")


def test_dates_and_mailbox_names() -> None:
    when = parser.date_time(String(b"17-Jul-1996 02:44:25 -0700"))
    assert when == datetime(1996, 7, 17, 9, 44, 25, tzinfo=UTC)
    assert parser.format_date_time(when) == "17-Jul-1996 09:44:25 +0000"
    # RFC 3501 5.1.3's example of modified UTF-7.
    assert (
        parser.decode_mailbox(b"~peter/mail/&U,BTFw-/&ZeVnLIqe-", utf8=False)
        == "~peter/mail/台北/日本語"
    )
    assert (
        parser.encode_mailbox("~peter/mail/台北/日本語", utf8=False)
        == "~peter/mail/&U,BTFw-/&ZeVnLIqe-"
    )
    assert parser.encode_mailbox("A&B", utf8=False) == "A&-B"
    assert parser.decode_mailbox("台北".encode(), utf8=True) == "台北"
