"""What FETCH shows of a message (RFC 9051 7.5.2): ENVELOPE, BODYSTRUCTURE, sections.

The MIME tree is the walk of the message's bytes (mta/imap/mime.py): every
part's header and body are byte ranges of the stored message, so sections
are its octets as they came, and sizes and line counts are those of the
octets a client fetches. A message/rfc822 part shows the message inside:
its ENVELOPE from its header's bytes, its own BODYSTRUCTURE, its lines.
"""

from __future__ import annotations

import email
import re
from email._parseaddr import AddrlistClass  # type: ignore[import-not-found]
from email.message import Message
from email.policy import compat32

from mta.imap import mime
from mta.imap.parser import Section
from mta.imap.responses import nstring, plist, string


def parse(raw: bytes) -> Message:
    """The stdlib's parse (SEARCH's BODY and TEXT keys decode parts with it)."""
    return email.message_from_bytes(raw, policy=compat32)


def split_head(raw: bytes) -> tuple[bytes, bytes]:
    """(header with its blank line, body) of a message or part."""
    for sep in (b"\r\n\r\n", b"\n\n"):
        i = raw.find(sep)
        if i >= 0:
            return raw[: i + len(sep)], raw[i + len(sep) :]
    return raw, b""


# -- ENVELOPE ----------------------------------------------------------------------
#
# Rendered from the header's bytes (RFC 9051 7.5.2: the fields as they are,
# encoded words and all; 8-bit bytes sent as they came), never from the
# store's columns: those hold the subject and names decoded and the date
# parsed, which the ENVELOPE must not show. An address field that is a plain
# list of ``name <box@host>`` or ``box@host`` is split by one regex; anything
# else (quotes with escapes, comments, groups, routes, 8-bit names) goes to
# the stdlib's address parser, whose answer the fast path equals byte for
# byte (tests/mta/imap/test_envelope.py). A group (RFC 5322 3.4) is shown as
# RFC 9051 7.5.2 says, as Dovecot does: a start marker with the group's name
# as mailbox name, its members, an end marker.

_FOLD = re.compile(rb"\r?\n(?=[ \t])")

# The fields ENVELOPE names, each with its folded continuation lines: one
# C-speed scan of the header, which skips the Received and DKIM lines a full
# parse would walk.
_ENVELOPE_FIELDS = re.compile(
    rb"^(date|subject|from|sender|reply-to|to|cc|bcc|in-reply-to|message-id)[ \t]*:"
    rb"[ \t]*([^\r\n]*(?:\r?\n[ \t][^\r\n]*)*)",
    re.IGNORECASE | re.MULTILINE,
)

# RFC 5322 atext, and "." (a phrase may hold one, as the stdlib reads it).
_ATOM = rb"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+"
_DOT_ATOM = rb"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
_ADDR = rb"(" + _DOT_ATOM + rb")@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*)"
# One address: a phrase of atoms one space apart, or a quoted string without
# escapes, before <box@host>; or <box@host> or box@host alone.
_SIMPLE = re.compile(
    rb"[ \t]*(?:(?:(" + _ATOM + rb"(?: " + _ATOM + rb")*)|\"([^\"\\\\\r\n]*)\")[ \t]*)?"
    rb"<" + _ADDR + rb">[ \t]*|[ \t]*" + _ADDR + rb"[ \t]*"
)


def _address(name: bytes, mailbox: bytes, host: bytes) -> bytes:
    return b"(%s NIL %s %s)" % (
        nstring(name or None),
        nstring(mailbox or None),
        nstring(host or None),
    )


class _AddressReader(AddrlistClass):  # type: ignore[misc]
    """The stdlib's address reader (what ``email.utils.getaddresses`` runs, the
    same on every Python 3.11: 3.11.10's strict checks, which turn a field they
    doubt into one empty address, are for deciding who mail is from, not for
    showing it), with a group's name kept: its members between a start
    ``(name, None)`` and an end ``(None, None)``, where the stdlib lists the
    members alone. The module is private (no type stubs), hence the ignores;
    its reader has been the same since Python 2."""

    field: str
    pos: int
    commentlist: list[str]

    def __init__(self, field: str) -> None:
        super().__init__(field)
        self.in_group = False

    def getaddress(self) -> list[tuple[str | None, str | None]]:
        # No colon, no group: the stdlib's reading without a second look. In a
        # group, a group (not RFC 5322) is the stdlib's reading too.
        if self.in_group or ":" not in self.field:
            return super().getaddress()  # type: ignore[no-any-return]
        start = self.pos
        # The stdlib's first steps, to see whether it would read a group.
        self.commentlist = []
        self.gotonext()
        phrase = self.getphraselist()
        self.gotonext()
        if self.pos >= len(self.field) or self.field[self.pos] != ":":
            self.pos = start
            return super().getaddress()  # type: ignore[no-any-return]
        # The name as a display name is read (comments out, quotes off, words
        # one space apart), encoded words as they are: what Dovecot shows.
        out: list[tuple[str | None, str | None]] = [(" ".join(phrase), None)]
        self.pos += 1
        self.in_group = True
        # The stdlib's group loop: members to the ";" (or the field's end).
        while self.pos < len(self.field):
            self.gotonext()
            if self.pos < len(self.field) and self.field[self.pos] == ";":
                self.pos += 1
                break
            out += self.getaddress()
        self.in_group = False
        out.append((None, None))
        self.gotonext()
        if self.pos < len(self.field) and self.field[self.pos] == ",":
            self.pos += 1
        return out


def _parsed_addresses(values: list[bytes]) -> list[bytes]:
    """The stdlib's reading of address fields (what the fast path must equal)."""
    text = ", ".join(v.decode("utf-8", "surrogateescape") for v in values)
    out = []
    for name, addr in _AddressReader(text).getaddrlist():
        if addr is None:
            # RFC 9051 7.5.2: NIL host; the group's name as mailbox name (even
            # an empty one: NIL there would end the group), NIL for the end.
            group = None if name is None else name.encode("utf-8", "surrogateescape")
            out.append(b"(NIL NIL %s NIL)" % nstring(group))
            continue
        if not addr and not name:
            continue
        mailbox, at, host = addr.rpartition("@")
        if not at:
            mailbox, host = addr, ""
        out.append(_address(*(s.encode("utf-8", "surrogateescape") for s in (name, mailbox, host))))
    return out


def _simple_addresses(values: list[bytes]) -> list[bytes] | None:
    """The fields' addresses when each is a plain list; None when one is not."""
    out = []
    for value in values:
        items = value.split(b",") if b'"' not in value else [value]
        for item in items:
            m = _SIMPLE.fullmatch(item)
            if m is None:
                return None
            phrase, quoted, box, host, box2, host2 = m.groups()
            if box is None:
                out.append(_address(b"", box2, host2))
            else:
                out.append(_address(phrase or quoted or b"", box, host))
    return out


def _addresses(values: list[bytes] | None, *, fast: bool = True) -> bytes:
    if not values:
        return b"NIL"
    # A folder's senders and recipients repeat (the owner's own address in
    # every To): a field value seen lately is rendered once.
    key = values[0] if fast and len(values) == 1 else None
    if key is not None:
        found = _RENDERED.get(key)
        if found is not None:
            return found
    out = _simple_addresses(values) if fast else None
    if out is None:
        out = _parsed_addresses(values)
    rendered = plist(out) if out else b"NIL"
    if key is not None:
        if len(_RENDERED) >= 4096:
            _RENDERED.clear()
        _RENDERED[key] = rendered
    return rendered


_RENDERED: dict[bytes, bytes] = {}


def header_fields(head: bytes) -> dict[bytes, list[bytes]]:
    """The envelope's fields of a header block, unfolded (RFC 5322 2.2.3: the
    line breaks out, the white space kept), by lower-cased name."""
    out: dict[bytes, list[bytes]] = {}
    for name, value in _ENVELOPE_FIELDS.findall(head):
        if b"\n" in value:
            value = _FOLD.sub(b"", value)
        out.setdefault(name.lower(), []).append(value.strip())
    return out


def envelope_of(head: bytes, *, fast: bool = True) -> bytes:
    """ENVELOPE of a message or part from its header block. ``fast=False``
    parses every address field with the stdlib (the reference the fast path
    is tested against)."""
    fields = header_fields(head)

    def one(name: bytes) -> bytes:
        values = fields.get(name)
        return nstring(values[0] if values and values[0] else None)

    from_ = _addresses(fields.get(b"from"), fast=fast)
    sender = fields.get(b"sender")
    reply_to = fields.get(b"reply-to")
    return plist(
        [
            one(b"date"),
            one(b"subject"),
            from_,
            _addresses(sender, fast=fast) if sender else from_,
            _addresses(reply_to, fast=fast) if reply_to else from_,
            _addresses(fields.get(b"to"), fast=fast),
            _addresses(fields.get(b"cc"), fast=fast),
            _addresses(fields.get(b"bcc"), fast=fast),
            one(b"in-reply-to"),
            one(b"message-id"),
        ]
    )


def _header(fields: Message, name: str) -> bytes | None:
    """A field's value as BODYSTRUCTURE shows it: unfolded (line breaks out, as
    Dovecot does), 8-bit bytes as they came; None when absent or empty."""
    value = fields.get(name)
    if value is None:
        return None
    data = str(value).encode("utf-8", "surrogateescape")
    return data.replace(b"\r", b"").replace(b"\n", b"").strip() or None


# -- BODYSTRUCTURE -----------------------------------------------------------------
#
# Rendered from the walk of the message's bytes (mta/imap/mime.py): sizes and
# line counts (line feeds, as Dovecot counts them) are of the bytes a section
# sends. Types, subtypes, encodings and parameter names go out upper-cased
# (RFC 9051's examples; they compare case-insensitively), values as they came.

# A multipart with no part (RFC 2046 asks for one): one empty text part, as Dovecot.
_EMPTY = b'("TEXT" "PLAIN" ("CHARSET" "us-ascii") NIL NIL "7BIT" 0 0'


def _params(fields: Message, header: str, text: bool = False) -> bytes:
    params = fields.get_params(header=header, unquote=True) or []
    out = []
    charset = False
    for key, value in params[1:]:
        if isinstance(value, tuple):  # RFC 2231: (charset, language, value)
            value = email.utils.collapse_rfc2231_value(value)
        charset = charset or key == "charset"
        out += [string(key.upper()), string(str(value).encode("utf-8", "surrogateescape"))]
    if text and not charset:
        # RFC 2045 5.2's default, as Dovecot adds it.
        out += [b'"CHARSET"', b'"us-ascii"']
    return plist(out) if out else b"NIL"


def _disposition(fields: Message) -> bytes:
    value = _header(fields, "Content-Disposition")
    if value is None:
        return b"NIL"
    kind = value.split(b";", 1)[0].strip()
    return plist([string(kind.upper()), _params(fields, "content-disposition")])


def _language(fields: Message) -> bytes:
    value = _header(fields, "Content-Language")
    if value is None:
        return b"NIL"
    return plist([string(v.strip()) for v in value.split(b",") if v.strip()])


def _extension(fields: Message) -> list[bytes]:
    """Disposition, language and location (RFC 9051 7.5.2's body extensions)."""
    return [_disposition(fields), _language(fields), nstring(_header(fields, "Content-Location"))]


def bodystructure(raw: bytes, part: mime.Part, extended: bool = True) -> bytes:
    """BODYSTRUCTURE (``extended``) or BODY of a part of ``raw`` (mime.walk(raw)
    for the whole message)."""
    fields = part.fields
    maintype, _, subtype = part.content_type.partition("/")
    if part.is_multipart:
        if part.children:
            parts = b"".join(bodystructure(raw, p, extended) for p in part.children)
        else:
            parts = _EMPTY + (b" NIL NIL NIL NIL)" if extended else b")")
        parts += b" " + string(subtype.upper())
        if extended:
            parts += b" " + b" ".join([_params(fields, "content-type"), *_extension(fields)])
        return b"(" + parts + b")"
    out = [
        string(maintype.upper()),
        string(subtype.upper()),
        _params(fields, "content-type", text=maintype == "text"),
        nstring(_header(fields, "Content-ID")),
        nstring(_header(fields, "Content-Description")),
        string((_header(fields, "Content-Transfer-Encoding") or b"7BIT").upper()),
        b"%d" % (part.end - part.body),
    ]
    if part.is_message:
        inner = part.children[0]
        out += [
            envelope_of(raw[inner.start : inner.body]),
            bodystructure(raw, inner, extended),
            b"%d" % raw.count(b"\n", part.body, part.end),
        ]
    elif maintype == "text":
        out.append(b"%d" % raw.count(b"\n", part.body, part.end))
    if extended:
        out += [nstring(_header(fields, "Content-MD5")), *_extension(fields)]
    return plist(out)


# -- sections ----------------------------------------------------------------------


class NoSuchPart(Exception):
    pass


def _filter_fields(header: bytes, names: tuple[str, ...], keep: bool) -> bytes:
    wanted = {n.lower() for n in names}
    out, keeping = [], False
    for line in header.splitlines(keepends=True):
        if line in (b"\r\n", b"\n"):
            break
        if line[:1] in (b" ", b"\t"):
            if keeping:
                out.append(line)
            continue
        name = line.split(b":", 1)[0].strip().decode("latin-1").lower()
        keeping = (name in wanted) == keep
        if keeping:
            out.append(line)
    return b"".join(out) + b"\r\n"


def section_bytes(raw: bytes, tree: mime.Part | None, sec: Section) -> bytes:
    """The bytes of BODY[section] (before any partial): slices of the message as
    stored (RFC 9051 6.4.5), as Dovecot cuts them."""
    if not sec.part:
        if sec.kind == "" and sec.name != "BINARY":
            return raw
        head, body = split_head(raw)
        if sec.kind == "HEADER":
            return head
        if sec.kind == "TEXT":
            return body
        if sec.kind.startswith("HEADER.FIELDS"):
            return _filter_fields(head, sec.fields, sec.kind == "HEADER.FIELDS")
        return raw
    assert tree is not None
    part = mime.find(tree, sec.part)
    if part is None:
        raise NoSuchPart
    if sec.kind == "MIME":
        # Of part 1 of a message that is not multipart, and of a message's body
        # that is not multipart: the message's header (as Dovecot).
        return raw[part.start : part.body]
    if sec.kind:
        # HEADER, TEXT, HEADER.FIELDS: of the message in a message/rfc822 part only.
        if not part.is_message:
            raise NoSuchPart
        inner = part.children[0]
        if sec.kind == "TEXT":
            return raw[inner.body : inner.end]
        head = raw[inner.start : inner.body]
        if sec.kind == "HEADER":
            return head
        return _filter_fields(head, sec.fields, sec.kind == "HEADER.FIELDS")
    body = raw[part.body : part.end]
    if sec.name in ("BINARY", "BINARY.SIZE") and not (part.is_multipart or part.is_message):
        return _decoded(raw[part.start : part.body], body)
    return body


def _decoded(head: bytes, body: bytes) -> bytes:
    """A leaf's body with its Content-Transfer-Encoding undone (RFC 3516), by the
    stdlib's decoders (lenient with bad base64, as mail readers are)."""
    msg = mime.fields_of(head)
    msg.set_payload(body.decode("ascii", "surrogateescape"))
    decoded = msg.get_payload(decode=True)
    return decoded if isinstance(decoded, bytes) else b""


def partial(data: bytes, sec: Section) -> bytes:
    if sec.partial is None:
        return data
    start, length = sec.partial
    return data[start : None if length is None else start + length]
