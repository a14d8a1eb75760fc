"""What FETCH shows of a message (RFC 9051 7.5.2): ENVELOPE, BODYSTRUCTURE, sections.

The MIME tree comes from Python's email package (compat32 policy: header
values and part bodies as they are in the message, nothing re-encoded), so
sizes, line counts and section bytes are those of the stored message.
"""

from __future__ import annotations

import email
import re
from email._parseaddr import AddrlistClass  # type: ignore[import-not-found]
from email.message import Message
from email.policy import compat32

from mta.imap.parser import Section
from mta.imap.responses import nstring, plist, string


def parse(raw: bytes) -> Message:
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


def _header(msg: Message, name: str) -> str | None:
    value = msg.get(name)
    if value is None:
        return None
    return " ".join(str(value).replace("\r\n", "\n").split("\n")).strip() or None


def envelope(msg: Message) -> bytes:
    """ENVELOPE of a parsed message (a message/rfc822 part): its header as it came."""
    return envelope_of(_header_bytes(msg))


# -- BODYSTRUCTURE -----------------------------------------------------------------


def _body_bytes(part: Message) -> bytes:
    # The payload as parsed (8-bit bytes kept as surrogates): get_payload()
    # would decode an 8-bit body by its charset, and then neither count nor
    # send the octets of the message.
    payload = getattr(part, "_payload", None)
    if isinstance(payload, str):
        return payload.encode("ascii", "surrogateescape")
    return b""


def _params(part: Message, header: str) -> bytes:
    params = part.get_params(header=header, unquote=True) or []
    out = []
    for key, value in params[1:]:
        if isinstance(value, tuple):  # RFC 2231: (charset, language, value)
            value = email.utils.collapse_rfc2231_value(value)
        out += [string(key.upper()), string(str(value))]
    return plist(out) if out else b"NIL"


def _disposition(part: Message) -> bytes:
    value = part.get("Content-Disposition")
    if value is None:
        return b"NIL"
    kind = str(value).split(";", 1)[0].strip()
    return plist([string(kind.upper()), _params(part, "content-disposition")])


def _lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _children(part: Message) -> list[Message]:
    payload = part.get_payload()
    return [p for p in payload if isinstance(p, Message)] if isinstance(payload, list) else []


def bodystructure(msg: Message, extended: bool = True) -> bytes:
    if msg.is_multipart():
        parts = _children(msg)
        out = b"".join(bodystructure(p, extended) for p in parts)
        if not parts:
            out = b'("TEXT" "PLAIN" NIL NIL NIL "7BIT" 0 0)'
        multi = string(msg.get_content_subtype().upper())
        if not extended:
            return b"(" + out + b" " + multi + b")"
        ext = [_params(msg, "content-type"), _disposition(msg), _language(msg), _location(msg)]
        return b"(" + out + b" " + multi + b" " + b" ".join(ext) + b")"
    maintype, subtype = msg.get_content_maintype(), msg.get_content_subtype()
    body = _body_bytes(msg)
    params = _params(msg, "content-type")
    if params == b"NIL" and maintype == "text":
        params = plist([string("CHARSET"), string("us-ascii")])
    fields = [
        string(maintype.upper()),
        string(subtype.upper()),
        params,
        nstring(_header(msg, "Content-ID")),
        nstring(_header(msg, "Content-Description")),
        string((_header(msg, "Content-Transfer-Encoding") or "7BIT").upper()),
        str(len(body)).encode(),
    ]
    if maintype == "message" and subtype == "rfc822":
        inner = msg.get_payload()
        inner_msg = inner[0] if isinstance(inner, list) and inner else parse(body)
        assert isinstance(inner_msg, Message)
        fields += [envelope(inner_msg), bodystructure(inner_msg, extended), b"%d" % _lines(body)]
    elif maintype == "text":
        fields.append(b"%d" % _lines(body))
    if extended:
        fields += [
            nstring(_header(msg, "Content-MD5")),
            _disposition(msg),
            _language(msg),
            _location(msg),
        ]
    return plist(fields)


def _language(msg: Message) -> bytes:
    value = _header(msg, "Content-Language")
    if value is None:
        return b"NIL"
    return plist([string(v.strip()) for v in value.split(",") if v.strip()])


def _location(msg: Message) -> bytes:
    return nstring(_header(msg, "Content-Location"))


# -- sections ----------------------------------------------------------------------


class NoSuchPart(Exception):
    pass


def _part(msg: Message, numbers: tuple[int, ...]) -> Message:
    """The part a section number names (RFC 9051 6.4.5)."""
    part = msg
    for n in numbers:
        if part.is_multipart():
            children = _children(part)
            if n > len(children):
                raise NoSuchPart
            part = children[n - 1]
        elif part.get_content_type() == "message/rfc822":
            inner = _children(part)
            part = inner[0] if inner else parse(_body_bytes(part))
            if part.is_multipart():
                children = _children(part)
                if n > len(children):
                    raise NoSuchPart
                part = children[n - 1]
            elif n != 1:
                raise NoSuchPart
        elif n != 1:
            raise NoSuchPart
    return part


def _header_bytes(msg: Message) -> bytes:
    # raw_items: the values as parsed (8-bit bytes kept as surrogates); items()
    # would wrap an 8-bit one in a Header, which no longer gives the bytes back.
    out = b"".join(
        f"{k}: {v}".encode("ascii", "surrogateescape")
        .replace(b"\r\n", b"\n")
        .replace(b"\n", b"\r\n")
        + b"\r\n"
        for k, v in msg.raw_items()
    )
    return out + b"\r\n"


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


def section_bytes(raw: bytes, msg: Message | None, sec: Section) -> bytes:
    """The bytes of BODY[section] (before any partial)."""
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
    assert msg is not None
    part = _part(msg, sec.part)
    if sec.kind == "MIME":
        return _header_bytes(part)
    if sec.kind in ("HEADER", "TEXT") or sec.kind.startswith("HEADER.FIELDS"):
        # Of a message/rfc822 part: the header and text of the message inside.
        inner = part.get_payload()
        inner_msg = inner[0] if isinstance(inner, list) and inner else part
        inner_raw = inner_msg.as_bytes() if isinstance(inner_msg, Message) else b""
        head, body = split_head(inner_raw)
        if sec.kind == "HEADER":
            return head
        if sec.kind == "TEXT":
            return body
        return _filter_fields(head, sec.fields, sec.kind == "HEADER.FIELDS")
    if part.is_multipart():
        return split_head(part.as_bytes())[1]
    if sec.name in ("BINARY", "BINARY.SIZE"):
        decoded = part.get_payload(decode=True)
        return decoded if isinstance(decoded, bytes) else b""
    if part.get_content_type() == "message/rfc822" and isinstance(part.get_payload(), list):
        inner = _children(part)
        return inner[0].as_bytes() if inner else b""
    return _body_bytes(part)


def partial(data: bytes, sec: Section) -> bytes:
    if sec.partial is None:
        return data
    start, length = sec.partial
    return data[start : None if length is None else start + length]
