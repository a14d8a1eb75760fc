"""Forwarded mail as real clients write it: message/rfc822 parts (forward as
attachment from Thunderbird, Apple Mail and Outlook), a multipart/digest
(whose parts are message/rfc822 by default), forwards inside forwards, and
the shapes a MIME reader trips on (preamble and epilogue, a missing final
boundary, LF-only lines, 8-bit bodies).

Each message comes with the section numbers worth fetching from it: every
part and, for a message/rfc822 part, what RFC 9051 6.4.5 names inside it.
"""

from __future__ import annotations

import base64
import imaplib
from typing import Any


def crlf(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode()


# What Thunderbird forwards: a reply with HTML, as it was received.
ORIGINAL_HTML = crlf(
    """Return-Path: <ann@remote.test>
Received: from mx.remote.test (mx.remote.test [192.0.2.7])
\tby mx.example.test with ESMTPS id 4Xy; Tue, 3 Nov 2026 09:12:01 +0000
DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=remote.test; s=s1;
\th=from:to:subject:date; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=;
\tb=dGhpcyBpcyBub3QgYSByZWFsIHNpZ25hdHVyZQ==
Message-ID: <0a1b2c3d-4e5f@remote.test>
Date: Tue, 3 Nov 2026 10:11:58 +0100
MIME-Version: 1.0
User-Agent: Mozilla Thunderbird
Content-Language: en-GB
To: Bob Example <bob@example.test>
Cc: "Team, The" <team@remote.test>
From: Ann Remote <ann@remote.test>
Subject: =?UTF-8?Q?Quarterly_numbers_=E2=80=93_draft?=
Content-Type: multipart/alternative;
 boundary="------------7Fz0Cq1ZcLbqx8r2M3Qv5sKu"

This is a multi-part message in MIME format.
--------------7Fz0Cq1ZcLbqx8r2M3Qv5sKu
Content-Type: text/plain; charset=UTF-8; format=flowed
Content-Transfer-Encoding: 7bit

Hi Bob,

the draft is attached below.\x20
Numbers are rough.

Ann

--------------7Fz0Cq1ZcLbqx8r2M3Qv5sKu
Content-Type: text/html; charset=UTF-8
Content-Transfer-Encoding: 7bit

<!DOCTYPE html>
<html>
  <head>
    <meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
  </head>
  <body>
    <p>Hi Bob,</p>
    <p>the draft is attached below.<br>Numbers are rough.</p>
    <p>Ann</p>
  </body>
</html>

--------------7Fz0Cq1ZcLbqx8r2M3Qv5sKu--
"""
)

THUNDERBIRD = (
    crlf(
        """Message-ID: <fwd-tb-1@example.test>
Date: Wed, 4 Nov 2026 08:00:00 +0100
MIME-Version: 1.0
User-Agent: Mozilla Thunderbird
Content-Language: en-US
To: Carol <carol@example.test>
From: Bob Example <bob@example.test>
Subject: Fwd: Quarterly numbers - draft
Content-Type: multipart/mixed; boundary="------------XB8d0Ql4GKVRyoBi3cz0ZJm5"

This is a multi-part message in MIME format.
--------------XB8d0Ql4GKVRyoBi3cz0ZJm5
Content-Type: text/plain; charset=UTF-8; format=flowed
Content-Transfer-Encoding: 7bit

See the attached mail.

--------------XB8d0Ql4GKVRyoBi3cz0ZJm5
Content-Type: message/rfc822; charset=UTF-8;
 name="Quarterly numbers - draft.eml"
Content-Disposition: attachment; filename="Quarterly numbers - draft.eml"

"""
    )
    + ORIGINAL_HTML
    + crlf("\n--------------XB8d0Ql4GKVRyoBi3cz0ZJm5--\n")
)

PNG = base64.encodebytes(bytes(range(256)) * 3).replace(b"\n", b"\r\n")

# Apple Mail: the forwarded mail holds a picture; the outer text is
# quoted-printable and the whole thing has no preamble.
APPLE_INNER = (
    crlf(
        """From: Dan <dan@remote.test>
Content-Type: multipart/mixed;
\tboundary="Apple-Mail=_5C1A2B3C-0000-4D4E-8F8F-111111111111"
Mime-Version: 1.0 (Mac OS X Mail 16.0 \\(3731.700.6\\))
Subject: Photo from the site
Message-Id: <A1B2C3D4-E5F6@remote.test>
Date: Mon, 2 Nov 2026 17:45:03 +0100
To: Bob <bob@example.test>


--Apple-Mail=_5C1A2B3C-0000-4D4E-8F8F-111111111111
Content-Transfer-Encoding: 7bit
Content-Type: text/plain;
\tcharset=us-ascii

Here it is.

--Apple-Mail=_5C1A2B3C-0000-4D4E-8F8F-111111111111
Content-Disposition: inline;
\tfilename=site.png
Content-Type: image/png;
\tx-unix-mode=0644;
\tname="site.png"
Content-Transfer-Encoding: base64

"""
    )
    + PNG
    + crlf(
        """
--Apple-Mail=_5C1A2B3C-0000-4D4E-8F8F-111111111111--
"""
    )
)

APPLE = (
    crlf(
        """From: Bob <bob@example.test>
Content-Type: multipart/mixed;
\tboundary="Apple-Mail=_9F9F9F9F-2222-4333-8444-555555555555"
Mime-Version: 1.0 (Mac OS X Mail 16.0 \\(3731.700.6\\))
Subject: Fwd: Photo from the site
Message-Id: <FWD-APPLE-1@example.test>
Date: Tue, 3 Nov 2026 09:00:00 +0100
To: Carol <carol@example.test>

--Apple-Mail=_9F9F9F9F-2222-4333-8444-555555555555
Content-Transfer-Encoding: quoted-printable
Content-Type: text/plain;
\tcharset=utf-8

Look at this =E2=80=94 from Dan.

--Apple-Mail=_9F9F9F9F-2222-4333-8444-555555555555
Content-Disposition: attachment;
\tfilename="Photo from the site.eml"
Content-Type: message/rfc822;
\tname="Photo from the site.eml"
Content-Transfer-Encoding: 7bit

"""
    )
    + APPLE_INNER
    + crlf(
        """
--Apple-Mail=_9F9F9F9F-2222-4333-8444-555555555555--
"""
    )
)

# Outlook: an alternative first, the forwarded mail (not multipart,
# quoted-printable) with a size and dates in its disposition, an epilogue.
OUTLOOK = crlf(
    """From: Bob Example <bob@example.test>
To: Carol <carol@example.test>
Subject: FW: Invoice 2026-11
Thread-Topic: Invoice 2026-11
Thread-Index: AQHbLh9k7N1sQ2c3TkC0vB1x5Q==
Date: Wed, 4 Nov 2026 07:30:12 +0000
Message-ID: <AM0PR01MB1234567ABCDEF@AM0PR01MB1234.eurprd01.prod.outlook.test>
Accept-Language: en-US
Content-Language: en-US
X-MS-Has-Attach: yes
Content-Type: multipart/mixed;
\tboundary="_002_AM0PR01MB1234567ABCDEFAM0PR01MB1234eurprd01prod_"
MIME-Version: 1.0

--_002_AM0PR01MB1234567ABCDEFAM0PR01MB1234eurprd01prod_
Content-Type: multipart/alternative;
\tboundary="_000_AM0PR01MB1234567ABCDEFAM0PR01MB1234eurprd01prod_"

--_000_AM0PR01MB1234567ABCDEFAM0PR01MB1234eurprd01prod_
Content-Type: text/plain; charset="us-ascii"
Content-Transfer-Encoding: quoted-printable

FYI, see attached.=20

--_000_AM0PR01MB1234567ABCDEFAM0PR01MB1234eurprd01prod_
Content-Type: text/html; charset="us-ascii"
Content-Transfer-Encoding: quoted-printable

<html><body><p>FYI, see attached.&nbsp;</p></body></html>

--_000_AM0PR01MB1234567ABCDEFAM0PR01MB1234eurprd01prod_--

--_002_AM0PR01MB1234567ABCDEFAM0PR01MB1234eurprd01prod_
Content-Type: message/rfc822
Content-Disposition: attachment;
\tcreation-date="Wed, 04 Nov 2026 07:30:11 GMT";
\tmodification-date="Wed, 04 Nov 2026 07:30:11 GMT"

Received: from billing.remote.test (192.0.2.9) by mail.example.test; Tue, 3 Nov 2026 12:00:00 +0000
From: Billing <billing@remote.test>
To: "Example, Bob" <bob@example.test>
Subject: Invoice 2026-11
Date: Tue, 3 Nov 2026 12:00:00 +0000
Message-ID: <inv-2026-11@remote.test>
Content-Type: text/plain; charset="iso-8859-1"
Content-Transfer-Encoding: quoted-printable
MIME-Version: 1.0

Dear customer,

your invoice of =A4 120,00 is due on 30 November.=20

Regards

--_002_AM0PR01MB1234567ABCDEFAM0PR01MB1234eurprd01prod_--

"""
)

# RFC 2046 5.1.5: a digest's parts are message/rfc822 unless they say.
DIGEST = crlf(
    """From: list-request@lists.test
To: bob@example.test
Subject: Tools digest, Vol 12, Issue 3
Date: Thu, 5 Nov 2026 06:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="===============outer=="

--===============outer==
Content-Type: text/plain; charset="us-ascii"
Content-Description: Tools digest, Vol 12, Issue 3

Today's Topics:

   1. hammers (Ann)
   2. Re: hammers (Dan)

--===============outer==
Content-Type: multipart/digest; boundary="===============digest=="
MIME-Version: 1.0

--===============digest==

From: Ann <ann@remote.test>
To: tools@lists.test
Subject: hammers
Date: Wed, 4 Nov 2026 10:00:00 +0000
Message-ID: <h1@remote.test>

Which hammer do you use?

--===============digest==

From: Dan <dan@remote.test>
To: tools@lists.test
Subject: Re: hammers
Date: Wed, 4 Nov 2026 11:00:00 +0000
Message-ID: <h2@remote.test>
In-Reply-To: <h1@remote.test>
Content-Type: multipart/alternative; boundary="alt"

--alt
Content-Type: text/plain

A claw hammer.
--alt
Content-Type: text/html

<p>A claw hammer.</p>
--alt--

--===============digest==
Content-Type: text/plain

An explicit text part in a digest.

--===============digest==--

--===============outer==--
"""
)

# A forward of a forward: message/rfc822 in multipart/mixed in message/rfc822,
# with a preamble and an epilogue at each level.
NESTED = crlf(
    """From: Carol <carol@example.test>
To: Erin <erin@example.test>
Subject: Fwd: Fwd: Quarterly numbers
Date: Thu, 5 Nov 2026 12:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="L1"

preamble of level one
--L1
Content-Type: text/plain

Forwarding Bob's forward.
--L1
Content-Type: message/rfc822

From: Bob Example <bob@example.test>
To: Carol <carol@example.test>
Subject: Fwd: Quarterly numbers
Date: Wed, 4 Nov 2026 08:00:00 +0100
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="L2"

preamble of level two
--L2
Content-Type: text/plain

See below.
--L2
Content-Type: message/rfc822
Content-Description: the original

From: Ann Remote <ann@remote.test>
To: Bob Example <bob@example.test>
Subject: Quarterly numbers
Date: Tue, 3 Nov 2026 10:11:58 +0100
Message-ID: <q@remote.test>

The numbers.
--L2--
epilogue of level two
--L1
Content-Type: application/octet-stream
Content-Transfer-Encoding: base64

AAECAwQFBgcICQ==
--L1--
epilogue of level one
"""
)

# The last boundary never comes (a cut-off message): the last part runs to the end.
MISSING_END = crlf(
    """From: ann@remote.test
To: bob@example.test
Subject: cut off
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="cut"

--cut
Content-Type: text/plain

first
--cut
Content-Type: message/rfc822

From: dan@remote.test
Subject: inside a cut-off message
Content-Type: multipart/alternative; boundary="inner"

--inner
Content-Type: text/plain

inner text, and no end either
"""
)

# 8-bit bytes in the forwarded header and body (and in the outer text).
EIGHT_BIT = (
    crlf(
        """From: Ren\u00e9 <rene@remote.test>
To: bob@example.test
Subject: Fwd: caf\u00e9
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="8b"

--8b
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

Voil\u00e0.
--8b
Content-Type: message/rfc822
Content-Transfer-Encoding: 8bit

From: Jos\u00e9 <jose@remote.test>
Subject: caf\u00e9 cr\u00e8me
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: 8bit

Un caf\u00e9, s'il vous pla\u00eet.
--8b--
"""
    )
    # and a byte that is not UTF-8
    .replace(b"Voil\xc3\xa0", b"Voil\xe0")
)

# The whole message is the forward (no multipart around it).
BARE = crlf(
    """From: bob@example.test
To: carol@example.test
Subject: Fwd: inside
MIME-Version: 1.0
Content-Type: message/rfc822

From: ann@remote.test
Subject: inside
Content-Type: multipart/mixed; boundary="x"

--x
Content-Type: text/plain

one
--x
Content-Type: text/plain

two
--x--
"""
)

# RFC 6532's message/global: a message with UTF-8 in its header, which RFC
# 9051 shows as message/rfc822 is shown (Dovecot 2.3 shows a plain part).
GLOBAL = crlf(
    """Subject: global
Content-Type: multipart/mixed; boundary="g"

--g
Content-Type: message/global

Subject: h\u00e9
Content-Type: text/plain; charset=utf-8

h\u00e9
--g--
"""
)

# Header and body in LF-only lines (an import, a Maildir file).
LF_ONLY = NESTED.replace(b"\r\n", b"\n")

MESSAGES: dict[str, bytes] = {
    "thunderbird": THUNDERBIRD,
    "apple mail": APPLE,
    "outlook": OUTLOOK,
    "digest": DIGEST,
    "nested": NESTED,
    "missing end": MISSING_END,
    "8-bit": EIGHT_BIT,
    "bare": BARE,
}

# Sections worth fetching from each: (part numbers, what) pairs.
SECTIONS: dict[str, list[str]] = {
    "thunderbird": ["1", "1.MIME", "2", "2.MIME", "2.HEADER", "2.TEXT", "2.1", "2.2", "2.2.MIME"],
    "apple mail": ["1", "2", "2.MIME", "2.HEADER", "2.TEXT", "2.1", "2.2", "2.2.MIME", "2.1.MIME"],
    "outlook": ["1", "1.1", "1.2", "1.MIME", "2", "2.MIME", "2.HEADER", "2.TEXT", "2.1"],
    "digest": [
        "1",
        "2",
        "2.1",
        "2.1.MIME",
        "2.1.HEADER",
        "2.1.TEXT",
        "2.1.1",
        "2.2.HEADER",
        "2.2.TEXT",
        "2.2.1",
        "2.2.2",
        "2.2.1.MIME",
        "2.3",
        "2.3.MIME",
    ],
    "nested": [
        "1",
        "2",
        "2.MIME",
        "2.HEADER",
        "2.TEXT",
        "2.1",
        "2.2",
        "2.2.MIME",
        "2.2.HEADER",
        "2.2.TEXT",
        "2.2.1",
        "3",
        "3.MIME",
    ],
    "missing end": ["1", "2", "2.MIME", "2.HEADER", "2.TEXT", "2.1", "2.1.MIME"],
    "8-bit": ["1", "2", "2.MIME", "2.HEADER", "2.TEXT", "2.1"],
    "bare": ["1", "HEADER", "TEXT", "1.HEADER", "1.TEXT", "1.1", "1.2", "1.1.MIME"],
}

# Shapes that are not what a client writes but what a reader must survive.
EDGES: dict[str, bytes] = {
    # A boundary line inside a part's header: the header ends there, no body.
    "header cut": crlf(
        """Subject: cut header
Content-Type: multipart/mixed; boundary="c"

--c
Content-Type: message/rfc822
--c
Content-Type: text/plain
X-Note: no empty line
--c--
"""
    ),
    # Boundaries that are prefixes of each other, nested both ways, and a
    # boundary line with padding after it.
    "prefix boundaries": crlf(
        """Subject: prefixes
Content-Type: multipart/mixed; boundary="ab"

--ab
Content-Type: multipart/alternative; boundary="abc"

--abc\x20\x20
Content-Type: text/plain

one
--abc
Content-Type: text/plain

two
--ab
Content-Type: message/rfc822

Subject: inside
Content-Type: multipart/mixed; boundary="a"

--a
Content-Type: text/plain

three
--a--
--ab--
"""
    ),
    # A multipart without a boundary, and one closed before any part.
    "no parts": crlf(
        """Subject: no parts
Content-Type: multipart/mixed; boundary="n"

--n
Content-Type: multipart/related

nothing here
--n
Content-Type: multipart/alternative; boundary="m"

--m--
--n--
"""
    ),
    # Header lines without a colon, an empty forwarded message and a part that
    # ends the message without a line break.
    "odd headers": crlf(
        """Subject: odd
Content-Type: multipart/mixed; boundary="o"

--o
Content-Type: text/plain
this line has no colon
Content-Description: after it

text
--o
Content-Type: message/rfc822

--o
Content-Type: text/plain

no end"""
    ),
    # LF line breaks in one part of a CRLF message, and an explicit
    # message/rfc822 part in a digest.
    "mixed line ends": crlf(
        """Subject: mixed
Content-Type: multipart/digest; boundary="d"

--d
Content-Type: message/rfc822

Subject: explicit

body
--d

Subject: LF@@Content-Type: text/plain@@@@lf body@@
--d--
"""
    ).replace(b"@@", b"\n"),
}

EDGE_SECTIONS: dict[str, list[str]] = {
    "header cut": ["1", "1.MIME", "1.HEADER", "1.TEXT", "1.1", "2", "2.MIME", "3"],
    "prefix boundaries": ["1", "1.1", "1.2", "1.2.MIME", "2", "2.HEADER", "2.TEXT", "2.1", "2.2"],
    "no parts": ["1", "1.MIME", "1.1", "2", "2.1", "2.MIME"],
    "odd headers": ["1", "1.MIME", "2", "2.HEADER", "2.TEXT", "2.1", "3", "3.MIME"],
    "mixed line ends": [
        "1",
        "1.HEADER",
        "1.TEXT",
        "1.1",
        "2",
        "2.HEADER",
        "2.TEXT",
        "2.1",
        "2.MIME",
    ],
}


# -- talking to a server ----------------------------------------------------------


def append_as_is(client: imaplib.IMAP4, folder: str, raw: bytes) -> None:
    """APPEND the octets as they are: imaplib's append() turns every line end
    into CRLF, which would leave no LF-only message to store."""
    client.literal = raw  # type: ignore[assignment]
    typ, data = client._simple_command("APPEND", folder)  # type: ignore[attr-defined]
    assert typ == "OK", data


# -- reading what a server sent ----------------------------------------------------

# One item of IMAP response data: NIL, a number, a string (quoted or a
# literal), an atom, or a parenthesised list of them.
Data = None | int | bytes | list["Data"]


def read_data(text: bytes) -> list[Data]:
    """The items of response data (RFC 9051 4), literals included."""
    items, pos = _read_items(text, 0, top=True)
    assert pos == len(text), text[pos:]
    return items


def _read_items(text: bytes, pos: int, *, top: bool = False) -> tuple[list[Data], int]:
    out: list[Data] = []
    while pos < len(text):
        c = text[pos : pos + 1]
        if c == b" ":
            pos += 1
        elif c == b")":
            assert not top
            return out, pos + 1
        elif c == b"(":
            inner, pos = _read_items(text, pos + 1)
            out.append(inner)
        elif c == b'"':
            value = bytearray()
            pos += 1
            while text[pos : pos + 1] != b'"':
                if text[pos : pos + 1] == b"\\":
                    pos += 1
                value += text[pos : pos + 1]
                pos += 1
            out.append(bytes(value))
            pos += 1
        elif c == b"{":
            close = text.index(b"}\r\n", pos)
            size = int(text[pos + 1 : close])
            start = close + 3
            out.append(text[start : start + size])
            pos = start + size
        else:
            end = pos
            while end < len(text) and text[end : end + 1] not in b" ()":
                end += 1
            atom = text[pos:end]
            out.append(None if atom == b"NIL" else int(atom) if atom.isdigit() else atom)
            pos = end
    assert top, "unclosed list"
    return out, pos


def responses(data: list[Any]) -> list[bytes]:
    """imaplib's answer to a FETCH joined back into one response per message
    (imaplib splits a response at its literals: a tuple each, then the rest)."""
    out: list[bytes] = []
    continued = False
    for item in data:
        assert item is not None
        text = item[0] + b"\r\n" + item[1] if isinstance(item, tuple) else item
        if continued:
            out[-1] += text
        else:
            out.append(text)
        continued = isinstance(item, tuple)
    return out


def fetched(data: list[Any]) -> dict[bytes, Data]:
    """One message's FETCH items by name (``BODY[2.MIME]`` and the like)."""
    [response] = responses(data)
    _, items = read_data(response)
    assert isinstance(items, list)
    pairs = iter(items)
    return {name: value for name, value in zip(pairs, pairs, strict=True)}  # type: ignore[misc]


def fold_case(body: Data, *, sizes: bool = True) -> Data:
    """A BODY or BODYSTRUCTURE with what RFC 9051 compares case-insensitively
    lower-cased (types, subtypes, encodings, parameter names, disposition
    types): one server's form comparable with another's. ``sizes=False``:
    the parts' sizes left out too (NIL)."""
    assert isinstance(body, list)
    out = list(body)
    if isinstance(out[0], list):  # multipart: parts, subtype, params, disposition...
        n = 0
        while isinstance(out[n], list):
            out[n] = fold_case(out[n], sizes=sizes)
            n += 1
        out[n] = _lower(out[n])
        if len(out) > n + 1:
            out[n + 1] = _params(out[n + 1])
        if len(out) > n + 2:
            out[n + 2] = _disposition(out[n + 2])
        return out
    out[0], out[1], out[2], out[5] = _lower(out[0]), _lower(out[1]), _params(out[2]), _lower(out[5])
    if not sizes:
        out[6] = None
    message = out[0] == b"message" and out[1] in (b"rfc822", b"global")
    if message:
        out[8] = fold_case(out[8], sizes=sizes)
    extension = 10 if message else 8 if out[0] == b"text" else 7
    if len(out) > extension + 1:
        out[extension + 1] = _disposition(out[extension + 1])
    return out


def _lower(value: Data) -> Data:
    return value.lower() if isinstance(value, bytes) else value


def _params(params: Data) -> Data:
    if not isinstance(params, list):
        return params
    return [_lower(v) if i % 2 == 0 else v for i, v in enumerate(params)]


def _disposition(value: Data) -> Data:
    if not isinstance(value, list):
        return value
    return [_lower(value[0]), _params(value[1])]


def part_sizes(body: Data, path: tuple[int, ...] = ()) -> dict[tuple[int, ...], int]:
    """Each part's size in a BODYSTRUCTURE by its section number (RFC 9051
    6.4.5: in a message/rfc822 part, its message's parts, or its message's
    body as part 1 when that is not multipart)."""
    assert isinstance(body, list)
    out: dict[tuple[int, ...], int] = {}
    if isinstance(body[0], list):
        n = 0
        while isinstance(body[n], list):
            out.update(part_sizes(body[n], (*path, n + 1)))
            n += 1
        return out
    here = path or (1,)
    size = body[6]
    assert isinstance(size, int)
    out[here] = size
    if _lower(body[0]) == b"message" and _lower(body[1]) in (b"rfc822", b"global"):
        inner = body[8]
        assert isinstance(inner, list)
        out.update(part_sizes(inner, here if isinstance(inner[0], list) else (*here, 1)))
    return out
