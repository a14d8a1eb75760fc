"""ENVELOPE (RFC 9051 7.5.2): the listing's fast renderer says exactly what the
stdlib's address parser says, over messages made to trip it up, and what
the RFC's own example says; group syntax as the RFC's start and end markers,
on every render path, and through the daemon (the cached form included)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from mta.imap import fetch, mime
from tests.mail import imap_server
from tests.mta.imap.conftest import Imap, Mailbox, run
from tests.mta.imap.shared import module_alice, module_db, module_imap  # noqa: F401

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


def _forwarded_envelope(head: bytes) -> bytes:
    """The ENVELOPE a forward of a message with this header shows in its
    BODYSTRUCTURE (the message/rfc822 part's message, cut by the MIME walk)."""
    forward = b"Content-Type: message/rfc822\r\n\r\n" + head + b"body\r\n"
    tree = mime.walk(forward)
    inner = tree.children[0]
    envelope = fetch.envelope_of(forward[inner.start : inner.body])
    assert b" " + envelope + b" " in fetch.bodystructure(forward, tree)
    return envelope


def _renders(head: bytes) -> tuple[bytes, bytes, bytes]:
    """(the listing's renderer, the stdlib parser alone, in a forward's BODYSTRUCTURE)."""
    if not head.endswith((b"\r\n\r\n", b"\n\n")):
        head += b"\r\n" if head.endswith(b"\r\n") else b"\n"
    return (
        fetch.envelope_of(head),
        fetch.envelope_of(head, fast=False),
        _forwarded_envelope(head),
    )


def test_the_rfc_example_envelope() -> None:
    assert fetch.envelope_of(RFC_HEADER) == RFC_ENVELOPE
    assert _forwarded_envelope(RFC_HEADER) == RFC_ENVELOPE


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


# RFC 9051 7.5.2: "[RFC5322] group syntax is indicated by a special form of
# address structure in which the host name field is NIL. If the mailbox name
# field is also NIL, this is an end-of-group marker (semicolon in RFC 822
# syntax). If the mailbox name field is non-NIL, this is the start of a group
# marker, and the mailbox name field holds the group name phrase."
START = b'(NIL NIL "%s" NIL)'
END = b"(NIL NIL NIL NIL)"


def _list(*addresses: bytes) -> bytes:
    return b"(" + b" ".join(addresses) + b")"


ANN = b'(NIL NIL "ann" "x.test")'
BOB = b'("Bob" NIL "bob" "x.test")'
CAROL = b'(NIL NIL "carol" "x.test")'
ANN_LIST = _list(ANN)

# A To field -> its address list, written from the RFC's words above (Dovecot
# 2.3's ENVELOPE for each agreed when checked by hand, apart from the space
# our lists put between addresses, as the RFC's own example does).
GROUPS = {
    "undisclosed recipients": (
        b"undisclosed-recipients:;",
        _list(START % b"undisclosed-recipients", END),
    ),
    "members then a plain address": (
        b"Team: ann@x.test, Bob <bob@x.test>;, carol@x.test",
        _list(START % b"Team", ANN, BOB, END, CAROL),
    ),
    "a plain address then a group": (
        b"carol@x.test, Team: ann@x.test;",
        _list(CAROL, START % b"Team", ANN, END),
    ),
    "two groups, one empty": (
        b"Team:;, friends: ann@x.test;",
        _list(START % b"Team", END, START % b"friends", ANN, END),
    ),
    # The name is the group name phrase: quotes off, comments out (nested ones
    # too), words one space apart, as a display name is read.
    "quoted name and a comment": (
        b'"My \\"Q\\" Group" (c) : ann@x.test;',
        _list(START % b'My \\"Q\\" Group', ANN, END),
    ),
    "nested comments in the name": (
        b"My  (comment (nested)) Group : ann@x.test;",
        _list(START % b"My Group", ANN, END),
    ),
    # Header fields go out as they are (7.5.2): an encoded word stays encoded,
    # as a member's display name does.
    "encoded-word name": (
        b"=?utf-8?q?=C3=89quipe?=: ann@x.test;",
        _list(START % b"=?utf-8?q?=C3=89quipe?=", ANN, END),
    ),
    "8-bit name": (
        b"Caf\xc3\xa9: ann@x.test;",
        _list(b"(NIL NIL {5}\r\nCaf\xc3\xa9 NIL)", ANN, END),
    ),
    # An empty name is still a start: NIL there would read as the end.
    "empty name": (b":;", _list(START % b"", END)),
    "no closing semicolon": (b"Team: ann@x.test", _list(START % b"Team", ANN, END)),
    "folded": (
        b"Team\r\n : ann@x.test,\r\n Bob <bob@x.test>;",
        _list(START % b"Team", ANN, BOB, END),
    ),
    # Colons that do not start a group: quoted, in a comment. (Nor does a
    # source route's, but its route is dropped here and kept by Dovecot.)
    "colons that are not groups": (
        b'G: "a:b" <ann@x.test>, (c: d) carol@x.test;, Bob <bob@x.test>',
        _list(START % b"G", b'("a:b" NIL "ann" "x.test")', CAROL, END, BOB),
    ),
}


@pytest.mark.parametrize(("value", "expected"), GROUPS.values(), ids=list(GROUPS))
def test_groups_are_shown_with_the_rfcs_markers(value: bytes, expected: bytes) -> None:
    head = b"From: ann@x.test\r\nTo: " + value + b"\r\n"
    for env in _renders(head):
        assert env == b"(NIL NIL %s %s %s %s NIL NIL NIL NIL)" % (
            ANN_LIST,
            ANN_LIST,
            ANN_LIST,
            expected,
        )


def test_dovecot_sends_the_same_groups() -> None:
    # The peer a user would pick instead, over the same headers: the same
    # structures (Dovecot writes no space between a list's addresses; the
    # RFC's example has one, as ours).
    if not imap_server.available():
        pytest.skip("dovecot is not installed (make imap-server installs it)")
    heads = [b"From: ann@x.test\r\nTo: " + value + b"\r\n\r\n" for value, _ in GROUPS.values()]
    for server in imap_server.running():
        server.add_user("ann", "password")
        c = server.connect("ann")
        for head in heads:
            assert c.append("INBOX", None, None, head + b"body\r\n")[0] == "OK"
        c.select("INBOX", readonly=True)
        typ, data = c.fetch("1:*", "(ENVELOPE)")
        c.logout()
    assert typ == "OK"
    # imaplib splits a response at its literals (a tuple each, then the
    # rest): joined back into one response each.
    responses: list[bytes] = []
    continued = False
    for item in data:
        assert item is not None
        text = item[0] + b"\r\n" + item[1] if isinstance(item, tuple) else item
        if continued:
            responses[-1] += text
        else:
            responses.append(text)
        continued = isinstance(item, tuple)

    def spaced(env: bytes) -> bytes:
        return env.replace(b") (", b")(")

    theirs = [spaced(r.split(b" (ENVELOPE ", 1)[1][:-1]) for r in responses]
    ours = [spaced(fetch.envelope_of(head)) for head in heads]
    assert theirs == ours


def test_a_group_in_from_stands_in_for_sender_and_reply_to() -> None:
    # RFC 6854 allows a group in From; absent Sender and Reply-To are From's list.
    head = b"From: Senders: ann@x.test, Bob <bob@x.test>;\r\nCc: undisclosed-recipients:;\r\n"
    senders = _list(START % b"Senders", ANN, BOB, END)
    for env in _renders(head):
        assert env == b"(NIL NIL %s %s %s NIL %s NIL NIL NIL)" % (
            senders,
            senders,
            senders,
            _list(START % b"undisclosed-recipients", END),
        )


def test_a_forwarded_messages_groups_in_its_bodystructure() -> None:
    # The message/rfc822 part's message, as the MIME walk cuts it from the
    # forward: the same markers as from the header bytes alone.
    inner = b"From: ann@x.test\r\nTo: undisclosed-recipients:;\r\nSubject: inner\r\n\r\nhi\r\n"
    outer = (
        b"From: carol@x.test\r\nTo: Bob <bob@x.test>\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
        b"--b\r\nContent-Type: text/plain\r\n\r\nsee below\r\n"
        b"--b\r\nContent-Type: message/rfc822\r\n\r\n" + inner + b"--b--\r\n"
    )
    expected = b'(NIL "inner" %s %s %s %s NIL NIL NIL NIL)' % (
        ANN_LIST,
        ANN_LIST,
        ANN_LIST,
        _list(START % b"undisclosed-recipients", END),
    )
    assert fetch.envelope_of(inner) == expected
    assert b" " + expected + b" " in fetch.bodystructure(outer, mime.walk(outer))


UNDISCLOSED = (
    b"From: Ann <ann@x.test>\r\nTo: undisclosed-recipients:;\r\nSubject: bcc only\r\n"
    b"Message-ID: <groups-1@x.test>\r\n\r\nYou were in Bcc.\r\n"
)


@pytest.mark.asyncio(loop_scope="module")
async def test_the_daemon_sends_the_group_markers_and_caches_them(
    imap: Imap, alice: Mailbox, db: Any
) -> None:
    def session() -> list[bytes]:
        c = imap.connect(alice)
        assert c.append("INBOX", None, None, UNDISCLOSED)[0] == "OK"
        c.select("INBOX", readonly=True)
        out = []
        for _ in range(2):  # rendered, then from mta.imap_cache
            typ, data = c.fetch("1", "(ENVELOPE)")
            assert typ == "OK" and isinstance(data[0], bytes)
            out.append(data[0])
        c.logout()
        return out

    first, second = await run(session)
    ann = b'(("Ann" NIL "ann" "x.test"))'
    assert first == (
        b'1 (ENVELOPE (NIL "bcc only" %s %s %s' % (ann, ann, ann)
        + b' ((NIL NIL "undisclosed-recipients" NIL) (NIL NIL NIL NIL))'
        + b' NIL NIL NIL "<groups-1@x.test>"))'
    )
    assert second == first
    cached = await db.fetch_val(
        "SELECT c.envelope FROM mta.imap_cache c JOIN mta.emails e ON e.id = c.email_id"
        " WHERE e.address_id = %s",
        (alice.address_id,),
    )
    assert bytes(cached) in first
