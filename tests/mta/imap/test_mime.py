"""The MIME walk (mta/imap/mime.py) and what FETCH renders from it
(mta/imap/fetch.py) for forwarded mail: a message/rfc822 part shows its
message's ENVELOPE, structure and lines (RFC 9051 7.5.2), section numbers go
into it (RFC 9051 6.4.5), and every section is the message's own octets,
sized as sent. Dovecot's answers for the same messages:
test_forwarded.py."""

from __future__ import annotations

import base64
import sys

import pytest

from mta.imap import fetch, mime
from mta.imap.parser import Section
from tests.mta.imap import forwarded
from tests.mta.imap.forwarded import part_sizes, read_data


def section(spec: str, name: str = "BODY") -> Section:
    numbers: list[int] = []
    words = spec.split(".") if spec else []
    while words and words[0].isdigit():
        numbers.append(int(words.pop(0)))
    return Section(name=name, peek=True, part=tuple(numbers), kind=".".join(words), spec=spec)


def body(raw: bytes, spec: str, name: str = "BODY") -> bytes:
    """BODY[spec] as the server sends it (an empty string for no such part)."""
    try:
        return fetch.section_bytes(raw, mime.walk(raw), section(spec, name))
    except fetch.NoSuchPart:
        return b""


def structure(raw: bytes, extended: bool = True) -> bytes:
    return fetch.bodystructure(raw, mime.walk(raw), extended)


# A small forward as attachment: a note, then the original (a multipart/alternative).
INNER_HEAD = (
    b"From: Ann <ann@x.test>\r\nSubject: hi\r\nMessage-ID: <hi@x.test>\r\n"
    b'Content-Type: multipart/alternative; boundary="a"\r\n\r\n'
)
INNER_TEXT = (
    b"--a\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nhello\r\n"
    b"--a\r\nContent-Type: text/html\r\n\r\n<p>hello</p>\r\n--a--\r\n"
)
INNER = INNER_HEAD + INNER_TEXT
FORWARD_MIME = (
    b"Content-Type: message/rfc822\r\nContent-Disposition: attachment; filename=hi.eml\r\n\r\n"
)
FORWARD = (
    b"From: carol@x.test\r\nSubject: Fwd: hi\r\nMIME-Version: 1.0\r\n"
    b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
    b"--b\r\nContent-Type: text/plain\r\n\r\nsee below\r\n"
    b"--b\r\n" + FORWARD_MIME + INNER + b"\r\n--b--\r\n"
)
ANN = b'(("Ann" NIL "ann" "x.test"))'


def test_a_message_rfc822_part_shows_its_messages_envelope_structure_and_lines() -> None:
    # RFC 9051 7.5.2: type, subtype, parameters, id, description, encoding,
    # size; then the message's ENVELOPE, its BODYSTRUCTURE and its lines. The
    # size and lines are the forwarded message's octets and line feeds (the
    # line break before "--b--" is the boundary's).
    assert structure(FORWARD) == (
        b'(("TEXT" "PLAIN" ("CHARSET" "us-ascii") NIL NIL "7BIT" 9 0 NIL NIL NIL NIL)'
        b'("MESSAGE" "RFC822" NIL NIL NIL "7BIT" 223'
        b' (NIL "hi" ' + ANN + b" " + ANN + b" " + ANN + b' NIL NIL NIL NIL "<hi@x.test>")'
        b' (("TEXT" "PLAIN" ("CHARSET" "utf-8") NIL NIL "7BIT" 5 0 NIL NIL NIL NIL)'
        b'("TEXT" "HTML" ("CHARSET" "us-ascii") NIL NIL "7BIT" 12 0 NIL NIL NIL NIL)'
        b' "ALTERNATIVE" ("BOUNDARY" "a") NIL NIL NIL) 14'
        b' NIL ("ATTACHMENT" ("FILENAME" "hi.eml")) NIL NIL)'
        b' "MIXED" ("BOUNDARY" "b") NIL NIL NIL)'
    )
    assert len(INNER) == 115 + 108 and INNER.count(b"\n") == 5 + 9
    # BODY: the same without the extension data, down into the message.
    assert structure(FORWARD, extended=False) == (
        b'(("TEXT" "PLAIN" ("CHARSET" "us-ascii") NIL NIL "7BIT" 9 0)'
        b'("MESSAGE" "RFC822" NIL NIL NIL "7BIT" 223'
        b' (NIL "hi" ' + ANN + b" " + ANN + b" " + ANN + b' NIL NIL NIL NIL "<hi@x.test>")'
        b' (("TEXT" "PLAIN" ("CHARSET" "utf-8") NIL NIL "7BIT" 5 0)'
        b'("TEXT" "HTML" ("CHARSET" "us-ascii") NIL NIL "7BIT" 12 0) "ALTERNATIVE") 14)'
        b' "MIXED")'
    )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("1", b"see below"),
        ("2", INNER),  # the part's body: the forwarded message, header and all
        ("2.MIME", FORWARD_MIME),  # the part's own header
        ("2.HEADER", INNER_HEAD),  # the forwarded message's header
        ("2.TEXT", INNER_TEXT),  # and its text
        ("2.1", b"hello"),  # the first part of the forwarded message's body
        ("2.2", b"<p>hello</p>"),
        ("2.1.MIME", b"Content-Type: text/plain; charset=utf-8\r\n\r\n"),
        ("2.2.1", b"<p>hello</p>"),  # part 1 of a part that is not multipart: itself
        ("2.3", b""),
        ("3", b""),
        ("1.HEADER", b""),  # HEADER and TEXT only of a message/rfc822 part
        ("1.TEXT", b""),
        ("2.1.HEADER", b""),
        ("2.2.2", b""),
    ],
)
def test_section_numbers_go_into_the_forwarded_message(spec: str, expected: bytes) -> None:
    # RFC 9051 6.4.5's numbering, where Python's tree made 2.1 the message
    # itself and 2.HEADER a serialisation of it.
    assert body(FORWARD, spec) == expected


def test_a_forwarded_message_that_is_not_multipart_has_its_body_as_part_1() -> None:
    inner = b"From: ann@x.test\r\nSubject: plain\r\n\r\njust text\r\n"
    raw = b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: message/rfc822\r\n\r\n'
    raw += inner + b"\r\n--b--\r\n"
    assert body(raw, "1") == inner
    assert body(raw, "1.1") == body(raw, "1.TEXT") == b"just text\r\n"
    # As Dovecot: a number past the message's body names nothing; .MIME of the
    # body is the message's header (its Content-* fields are there).
    assert body(raw, "1.1.1") == body(raw, "1.2") == b""
    assert body(raw, "1.1.MIME") == body(raw, "1.HEADER") == inner[: inner.index(b"just")]


def test_a_whole_message_that_is_a_forward() -> None:
    # Content-Type: message/rfc822 on the message itself: part 1 is the
    # forwarded message, 1.1 and on its parts.
    raw = forwarded.BARE
    inner = raw[raw.index(b"From: ann") :]
    assert body(raw, "1") == body(raw, "TEXT") == inner
    assert body(raw, "1.HEADER") == inner[: inner.index(b"--x")]
    assert body(raw, "1.1") == b"one"
    assert body(raw, "1.2") == b"two"
    assert body(raw, "1.MIME") == body(raw, "HEADER")


# Header fields the stdlib's as_bytes() writes otherwise than they came.
ODD_INNER = (
    b"Subject:no space after the colon\r\n"
    b"From: Jos\xe9 <jose@x.test>\r\n"  # Latin-1, not UTF-8
    b"To: a@x.test,\r\n\tb@x.test\r\n"
    b"X-Padded: value   \r\n"
    b"DKIM-Signature: v=1; a=rsa-sha256; d=x.test; s=s1; h=from:to:subject; bh="
    + b"A"
    * 90
    + b"\r\n"
    b"Content-Type: text/plain; charset=iso-8859-1\r\n"
    b"Content-Transfer-Encoding: 8bit\r\n"
    b"\r\n"
    b"Caf\xe9.\r\n"
    b"-- \r\n"  # a signature separator is no boundary
    b"Jos\xe9\r\n"
)
ODD_FORWARD = (
    b'Content-Type: multipart/signed; protocol="application/pgp-signature"; boundary="s"\r\n\r\n'
    b"--s\r\nContent-Type: message/rfc822\r\n\r\n" + ODD_INNER + b"\r\n--s\r\n"
    b"Content-Type: application/pgp-signature\r\n\r\n-----BEGIN PGP SIGNATURE-----\r\n"
    b"-----END PGP SIGNATURE-----\r\n--s--\r\n"
)


def test_sections_are_the_octets_as_they_came() -> None:
    # What a signature over a forwarded message is checked against: the
    # bytes as they came, where the stdlib's as_bytes() (what sections were
    # cut from before) refolds, respaces and re-encodes them.
    head, text = ODD_INNER.split(b"\r\n\r\n", 1)
    assert body(ODD_FORWARD, "1") == ODD_INNER
    assert body(ODD_FORWARD, "1.HEADER") == head + b"\r\n\r\n"
    assert body(ODD_FORWARD, "1.TEXT") == body(ODD_FORWARD, "1.1") == text
    assert body(ODD_FORWARD, "2") == b"-----BEGIN PGP SIGNATURE-----\r\n-----END PGP SIGNATURE-----"
    stdlib = fetch.parse(ODD_FORWARD).get_payload()[0].get_payload()[0].as_bytes()  # type: ignore[index,union-attr]
    assert stdlib != ODD_INNER
    # The sizes BODYSTRUCTURE gives are those octets'.
    [sizes] = [part_sizes(item) for item in read_data(structure(ODD_FORWARD))]
    assert sizes == {(1,): len(ODD_INNER), (1, 1): len(text), (2,): len(body(ODD_FORWARD, "2"))}


def test_a_forward_inside_a_forward() -> None:
    # message/rfc822 in multipart/mixed in message/rfc822, with a preamble and
    # an epilogue at each level: neither is in a part, both in their multipart.
    raw = forwarded.NESTED
    assert body(raw, "1") == b"Forwarding Bob's forward."
    assert body(raw, "2.1") == b"See below."
    assert body(raw, "2.2.MIME") == (
        b"Content-Type: message/rfc822\r\nContent-Description: the original\r\n\r\n"
    )
    assert body(raw, "2.2.HEADER").startswith(b"From: Ann Remote")
    assert body(raw, "2.2.TEXT") == body(raw, "2.2.1") == b"The numbers."
    assert body(raw, "2.TEXT") == (
        b"preamble of level two\r\n--L2\r\nContent-Type: text/plain\r\n\r\nSee below.\r\n"
        b"--L2\r\nContent-Type: message/rfc822\r\nContent-Description: the original\r\n\r\n"
        + body(raw, "2.2")
        + b"\r\n--L2--\r\nepilogue of level two"
    )
    assert body(raw, "TEXT").startswith(b"preamble of level one\r\n--L1\r\n")
    assert body(raw, "TEXT").endswith(b"--L1--\r\nepilogue of level one\r\n")
    assert body(raw, "3") == b"AAECAwQFBgcICQ=="
    assert body(raw, "3", "BINARY") == bytes(range(10))


def test_a_missing_close_delimiter_ends_the_parts_at_the_end() -> None:
    raw = forwarded.MISSING_END
    assert body(raw, "1") == b"first"
    # No boundary follows: the last line break is the part's own.
    assert body(raw, "2.1") == b"inner text, and no end either\r\n"
    assert body(raw, "2") == raw[raw.index(b"From: dan") :]


def test_an_enclosing_boundary_ends_the_parts_inside() -> None:
    # The forwarded message's multipart never closes: the outer boundary ends it.
    raw = (
        b'Content-Type: multipart/mixed; boundary="out"\r\n\r\n'
        b"--out\r\nContent-Type: message/rfc822\r\n\r\n"
        b'Content-Type: multipart/mixed; boundary="in"\r\n\r\n'
        b"--in\r\nContent-Type: text/plain\r\n\r\ninner, unclosed\r\n"
        b"--out\r\nContent-Type: text/plain\r\n\r\nafter\r\n--out--\r\n"
    )
    assert body(raw, "1.1") == b"inner, unclosed"
    assert body(raw, "1").endswith(b"inner, unclosed")
    assert body(raw, "2") == b"after"


def test_lf_line_ends_are_kept_and_counted_as_they_are() -> None:
    # The octets as stored, LF alone: sizes are theirs (Dovecot counts a CR
    # for each LF and sends CRLF; docs/mail.md, IMAP choices).
    lf = forwarded.LF_ONLY
    crlf = forwarded.NESTED
    for spec in ("1", "2", "2.MIME", "2.HEADER", "2.TEXT", "2.1", "2.2", "2.2.TEXT", "3"):
        assert body(lf, spec) == body(crlf, spec).replace(b"\r\n", b"\n")
    [sizes] = [part_sizes(item) for item in read_data(structure(lf))]
    assert sizes[(2,)] == len(body(lf, "2")) == len(body(crlf, "2")) - body(crlf, "2").count(b"\n")


def test_8bit_bodies_and_headers_go_out_as_they_came() -> None:
    raw = forwarded.EIGHT_BIT
    assert body(raw, "1") == b"Voil\xe0."
    assert body(raw, "2.1") == "Un café, s'il vous plaît.".encode()
    # The forwarded message's 8-bit header goes out as a literal in its ENVELOPE.
    assert b'(NIL {12}\r\ncaf\xc3\xa9 cr\xc3\xa8me (({5}\r\nJos\xc3\xa9 NIL "jose"' in structure(
        raw
    )


def test_a_digests_parts_are_messages_unless_they_say() -> None:
    # RFC 2046 5.1.5: no Content-Type in a multipart/digest is message/rfc822.
    raw = forwarded.DIGEST
    [items] = read_data(structure(raw))
    assert isinstance(items, list) and isinstance(items[1], list)
    digest = items[1]
    kinds = [(p[0], p[1]) for p in digest[:3] if isinstance(p, list)]
    assert kinds == [(b"MESSAGE", b"RFC822"), (b"MESSAGE", b"RFC822"), (b"TEXT", b"PLAIN")]
    assert body(raw, "2.1.MIME") == b"\r\n"  # an empty header
    assert body(raw, "2.1.TEXT") == b"Which hammer do you use?\r\n"
    assert body(raw, "2.2.2") == b"<p>A claw hammer.</p>"
    assert body(raw, "2.3") == b"An explicit text part in a digest.\r\n"


def test_boundaries_match_as_rfc_2046_says() -> None:
    # A boundary need only begin the line (padding after it is allowed); of
    # prefixes of one another the longest wins; a boundary line in a header
    # cuts it short.
    raw = forwarded.EDGES["prefix boundaries"]
    assert body(raw, "1.1") == b"one"
    assert body(raw, "1.2") == b"two"
    assert body(raw, "2.1") == b"three"
    cut = forwarded.EDGES["header cut"]
    assert body(cut, "1.MIME") == b"Content-Type: message/rfc822"
    assert body(cut, "1") == b""
    assert body(cut, "2.MIME") == b"Content-Type: text/plain\r\nX-Note: no empty line"
    assert body(cut, "3") == b""
    assert b'"MESSAGE" "RFC822" NIL NIL NIL "7BIT" 0 (NIL NIL NIL NIL' in structure(cut)


def test_a_multipart_without_parts_is_an_empty_text_part() -> None:
    raw = forwarded.EDGES["no parts"]
    empty = b'("TEXT" "PLAIN" ("CHARSET" "us-ascii") NIL NIL "7BIT" 0 0 NIL NIL NIL NIL)'
    assert structure(raw).startswith(b"((" + empty + b' "RELATED" NIL NIL NIL NIL)(' + empty)
    assert body(raw, "1") == b"nothing here"
    assert body(raw, "1.1") == b""


def test_message_global_is_a_message_too() -> None:
    # RFC 9051 7.5.2 and 6.4.5 treat message/global (RFC 6532) as message/rfc822.
    raw = forwarded.GLOBAL
    assert structure(raw).startswith(
        b'(("MESSAGE" "GLOBAL" NIL NIL NIL "7BIT" 60 (NIL {3}\r\nh\xc3\xa9 NIL'
    )
    assert (
        body(raw, "1.HEADER")
        == "Subject: hé\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n".encode()
    )
    assert body(raw, "1.TEXT") == body(raw, "1.1") == "hé".encode()


def test_a_part_may_end_the_message_without_a_line_break() -> None:
    raw = forwarded.EDGES["odd headers"]
    assert body(raw, "3") == b"no end"
    # A header line without a colon stays in the header.
    assert body(raw, "1.MIME") == (
        b"Content-Type: text/plain\r\nthis line has no colon\r\nContent-Description: after it\r\n\r\n"
    )
    assert b'"after it"' in structure(raw)


def test_deep_nesting_stops_at_dovecots_limits() -> None:
    # A message made to exhaust the stack: past 100 levels a part is text/plain.
    depth = sys.getrecursionlimit() * 2
    raw = b"".join(
        b'Content-Type: multipart/mixed; boundary="b%05d"\r\n\r\n--b%05d\r\n' % (n, n)
        for n in range(depth)
    )
    raw += b"Content-Type: text/plain\r\n\r\nbottom\r\n"
    tree = mime.walk(raw)
    levels = 0
    part = tree
    while part.children:
        part = part.children[0]
        levels += 1
    assert levels == mime.MAX_DEPTH
    assert part.content_type == "text/plain"
    assert structure(raw).count(b'"MIXED"') == mime.MAX_DEPTH
    # And message/rfc822 inside message/rfc822 alike.
    nested = b"Content-Type: message/rfc822\r\n\r\n" * depth + b"\r\nbottom\r\n"
    assert structure(nested).count(b'"RFC822"') == mime.MAX_DEPTH


def test_no_more_than_10000_parts() -> None:
    raw = b'Content-Type: multipart/mixed; boundary="b"\r\n\r\n'
    raw += (
        b"--b\r\nContent-Type: message/rfc822\r\n\r\nSubject: x\r\n\r\nx\r\n" * 6000 + b"--b--\r\n"
    )
    tree = mime.walk(raw)
    walked = [tree]
    for part in walked:
        walked += part.children
    assert len(walked) == mime.MAX_PARTS
    # The part at the limit is text and holds the rest of the message.
    last = tree.children[-1]
    assert tree.children[-2].is_message and last.content_type == "text/plain"
    assert len(tree.children) == (mime.MAX_PARTS - 1) // 2 + 1
    assert body(raw, str(len(tree.children))).endswith(b"x\r\n--b--\r\n")
    assert body(raw, str(len(tree.children) + 1)) == b""


def test_binary_decodes_a_part_inside_the_forward() -> None:
    raw = forwarded.APPLE
    png = base64.b64decode(forwarded.PNG)
    assert body(raw, "2.2", "BINARY") == png
    assert body(raw, "2.2", "BINARY.SIZE") == png
    # BINARY of a message part is its octets (nothing to decode).
    assert body(raw, "2", "BINARY") == body(raw, "2")


def test_sizes_are_the_lengths_of_the_sections_sent() -> None:
    # Every message of the set: each size BODYSTRUCTURE gives is the length of
    # BODY[that part] as sent, by RFC 9051's numbering.
    for raw in [*forwarded.MESSAGES.values(), *forwarded.EDGES.values(), forwarded.LF_ONLY]:
        [items] = read_data(structure(raw))
        sizes = part_sizes(items)
        assert sizes, raw[:60]
        for path, size in sizes.items():
            assert len(body(raw, ".".join(map(str, path)))) == size, (raw[:60], path)
