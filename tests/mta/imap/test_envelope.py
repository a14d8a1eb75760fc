"""ENVELOPE (RFC 9051 7.5.2): the listing's fast renderer says exactly what the
stdlib's address parser says, over messages made to trip it up, and what
the RFC's own example says."""

from __future__ import annotations

import itertools

import pytest

from mta.imap import fetch

# RFC 9051 7.5.2's example response, and a header block it is the ENVELOPE of.
RFC_HEADER = (
    b"Date: Wed, 17 Jul 1996 02:23:25 -0700 (PDT)\r\n"
    b"From: Terry Gray <gray@cac.washington.edu>\r\n"
    b"Subject: IMAP4rev2 WG mtg summary and minutes\r\n"
    b"To: imap@cac.washington.edu\r\n"
    b"Cc: minutes@CNRI.Reston.VA.US, John Klensin <KLENSIN@MIT.EDU>\r\n"
    b"Message-Id: <B27397-0100000@cac.washington.edu>\r\n"
    b"MIME-Version: 1.0\r\n\r\n"
)
RFC_ENVELOPE = (
    b'("Wed, 17 Jul 1996 02:23:25 -0700 (PDT)" "IMAP4rev2 WG mtg summary and minutes"'
    b' (("Terry Gray" NIL "gray" "cac.washington.edu"))'
    b' (("Terry Gray" NIL "gray" "cac.washington.edu"))'
    b' (("Terry Gray" NIL "gray" "cac.washington.edu"))'
    b' ((NIL NIL "imap" "cac.washington.edu"))'
    b' ((NIL NIL "minutes" "CNRI.Reston.VA.US") ("John Klensin" NIL "KLENSIN" "MIT.EDU"))'
    b' NIL NIL "<B27397-0100000@cac.washington.edu>")'
)

# Header blocks of the kinds real mail has, each a trap for one shortcut.
TRICKY = {
    "encoded words": (
        b"From: =?utf-8?q?Ren=C3=A9_Dupont?= <rene@remote.test>\r\n"
        b"To: =?ISO-8859-1?B?QmVhdHJpeA==?= <bea@example.test>, =?us-ascii?q?Bob?= <b@x.test>\r\n"
        b"Subject: =?utf-8?q?Rapport_=C3=A9t=C3=A9?= and more\r\n"
    ),
    "quoted names": (
        b'From: "Dupont, Rene" <rene@remote.test>\r\n'
        b'To: "A \\"quoted\\" name" <a@x.test>, "two  spaces" <b@x.test>\r\n'
        b'Cc: "" <empty@x.test>, "x@y" <real@x.test>\r\n'
    ),
    "groups": (
        b"From: alice@example.test\r\n"
        b"To: undisclosed-recipients:;\r\n"
        b"Cc: Team: ann@x.test, Bob <bob@x.test>;, carol@x.test\r\n"
        b"Bcc: friends:;\r\n"
    ),
    "missing headers": b"Subject: only a subject\r\n",
    "empty values": b"From:\r\nTo: \r\nSubject:\r\nDate:   \r\nMessage-ID:\r\n",
    "sender and reply-to": (
        b"From: Ann <ann@x.test>\r\nSender: list-bounces@lists.test\r\n"
        b"Reply-To: List <list@lists.test>\r\nIn-Reply-To: <p@x.test>\r\n"
    ),
    "comments and routes": (
        b"From: ann@x.test (Ann Example)\r\n"
        b"To: <@relay.test:bob@x.test>, Carol (work) <carol@x.test>\r\n"
        b"Cc: <dan@x.test>, eve@x.test\r\n"
    ),
    "whitespace": (
        b"From: Ann   Example <ann@x.test>\r\n"
        b"To:\tBob\t<bob@x.test>  ,  carol@x.test\r\n"
        b"Cc: Dan<dan@x.test>\r\n"
        b"Subject:   padded subject   \r\n"
    ),
    "folded": (
        b"From: Ann Example\r\n <ann@x.test>\r\n"
        b"To: bob@x.test,\r\n\tcarol@x.test\r\n"
        b"Subject: a subject folded\r\n  over two lines\r\n"
    ),
    "raw utf-8 and latin-1": (
        b"From: Ren\xc3\xa9 <rene@x.test>\r\n"
        b'To: "Jos\xc3\xa9 P." <jose@x.test>\r\n'
        b"Cc: caf\xe9 <cafe@x.test>\r\n"
        b"Subject: \xc3\xa9t\xc3\xa9 caf\xe9\r\n"
    ),
    "odd addresses": (
        b"From: postmaster\r\n"
        b"To: a b@x.test, @x.test, local@, ,,, Ann <ann@x.test>\r\n"
        b"Cc: <>, Bob <>\r\n"
    ),
    "several fields and cases": (
        b"FROM: Ann <ann@x.test>\r\n"
        b"to: bob@x.test\r\nTo: carol@x.test\r\n"
        b"message-id: <m1@x.test>\r\nMessage-ID: <m2@x.test>\r\n"
        b'SUBJECT: Re: [list] "quotes" and \\ backslash\r\n'
    ),
    "special characters in names": (
        b"From: O'Brien <ob@x.test>\r\n"
        b"To: A.B. Smith <ab@x.test>, J. R. <jr@x.test>\r\n"
        b"Cc: =?utf-8?q?a?= =?utf-8?q?b?= <ab@x.test>, x+y=z <xy@x.test>\r\n"
    ),
    "lf line ends": b"From: Ann <ann@x.test>\nTo: bob@x.test,\n carol@x.test\nSubject: lf\n",
}


def _renders(head: bytes) -> tuple[bytes, bytes, bytes]:
    """(the listing's renderer, the stdlib parser alone, from the parsed message)."""
    if not head.endswith((b"\r\n\r\n", b"\n\n")):
        head += b"\r\n" if head.endswith(b"\r\n") else b"\n"
    message = fetch.parse(head + b"body\r\n")
    return (
        fetch.envelope_of(head),
        fetch.envelope_of(head, fast=False),
        fetch.envelope(message),
    )


def test_the_rfc_example_envelope() -> None:
    assert fetch.envelope_of(RFC_HEADER) == RFC_ENVELOPE
    assert fetch.envelope(fetch.parse(RFC_HEADER + b"minutes\r\n")) == RFC_ENVELOPE


@pytest.mark.parametrize("head", TRICKY.values(), ids=list(TRICKY))
def test_fast_envelope_equals_the_address_parser(head: bytes) -> None:
    fast, parsed, from_message = _renders(head)
    assert fast == parsed
    assert from_message == parsed


def test_fast_envelope_equals_the_parser_over_combinations() -> None:
    names = [b"", b"Ann", b"Ann Example", b"Ann  Example", b'"Example, Ann"', b'"A \\" B"',
             b"=?utf-8?q?Ann?=", b"Ann (c)", b"A.", b"Ann\t", b"An\xc3\xa9"]  # fmt: skip
    addresses = [b"ann@x.test", b"ann.b@x-y.test", b"ann", b"a+b@x.test", b"ann@[192.0.2.1]",
                 b'"a b"@x.test', b"ann@x..test", b"ANN@X.TEST"]  # fmt: skip
    joins = [b", ", b",", b" , ", b",\r\n "]
    count = 0
    for name, address, join in itertools.product(names, addresses, joins):
        one = (name + b" <" + address + b">") if name else address
        for value in (one, one + join + b"bob@x.test", b"Bob <bob@x.test>" + join + one):
            fast, parsed, from_message = _renders(b"From: " + value + b"\r\nTo: " + one + b"\r\n")
            assert fast == parsed, value
            assert from_message == parsed, value
            count += 1
    assert count == len(names) * len(addresses) * len(joins) * 3


def test_nil_where_a_field_is_absent_and_from_stands_in() -> None:
    # No Sender or Reply-To: From's list in both places (RFC 9051 7.5.2).
    env = fetch.envelope_of(b"From: Ann <ann@x.test>\r\n\r\n")
    ann = b'(("Ann" NIL "ann" "x.test"))'
    assert env == b"(NIL NIL " + b" ".join([ann, ann, ann]) + b" NIL NIL NIL NIL NIL)"
    assert fetch.envelope_of(b"X-Other: 1\r\n\r\n") == b"(" + b" ".join([b"NIL"] * 10) + b")"


def test_8bit_header_bytes_go_out_as_they_came() -> None:
    env = fetch.envelope_of(
        b"Subject: caf\xe9 \xc3\xa9t\xc3\xa9\r\nFrom: Ren\xc3\xa9 <r@x.test>\r\n\r\n"
    )
    # Not UTF-8 (the Latin-1 \xe9): still sent, as a literal of the very bytes.
    assert b"{10}\r\ncaf\xe9 \xc3\xa9t\xc3\xa9 " in env
    assert b'(({5}\r\nRen\xc3\xa9 NIL "r" "x.test"))' in env
