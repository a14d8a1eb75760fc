"""What FETCH shows of a message (RFC 9051 7.5.2): ENVELOPE, BODYSTRUCTURE, sections.

The MIME tree comes from Python's email package (compat32 policy: header
values and part bodies as they are in the message, nothing re-encoded), so
sizes, line counts and section bytes are those of the stored message.
"""

from __future__ import annotations

import email
import re
from email.message import Message
from email.policy import compat32
from email.utils import getaddresses
from typing import Any

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


def _addresses(values: list[str] | None) -> bytes:
    if not values:
        return b"NIL"
    out = []
    for name, addr in getaddresses(values):
        if not addr and not name:
            continue
        mailbox, at, host = addr.rpartition("@")
        if not at:
            mailbox, host = addr, ""
        out.append(
            plist([nstring(name or None), b"NIL", nstring(mailbox or None), nstring(host or None)])
        )
    return plist(out) if out else b"NIL"


def _header(msg: Message, name: str) -> str | None:
    value = msg.get(name)
    if value is None:
        return None
    return " ".join(str(value).replace("\r\n", "\n").split("\n")).strip() or None


def envelope(msg: Message) -> bytes:
    def addrs(name: str) -> list[str] | None:
        values = msg.get_all(name)
        return [str(v) for v in values] if values else None

    from_ = addrs("From")
    return plist(
        [
            nstring(_header(msg, "Date")),
            nstring(_header(msg, "Subject")),
            _addresses(from_),
            _addresses(addrs("Sender") or from_),
            _addresses(addrs("Reply-To") or from_),
            _addresses(addrs("To")),
            _addresses(addrs("Cc")),
            _addresses(addrs("Bcc")),
            nstring(_header(msg, "In-Reply-To")),
            nstring(_header(msg, "Message-ID")),
        ]
    )


_FOLD = re.compile(rb"\r?\n[ \t]")
_STORED = {"from": "from_addrs", "to": "to_addrs", "cc": "cc_addrs"}


# The fields ENVELOPE names (beside From/To/Cc, which the store parsed), each
# with its folded continuation lines: one C-speed scan of the header, which
# skips the Received and DKIM lines a full split would walk.
_ENVELOPE_FIELDS = re.compile(
    rb"^(date|subject|from|sender|reply-to|to|cc|bcc|in-reply-to|message-id)[ \t]*:"
    rb"[ \t]*([^\r\n]*(?:\r?\n[ \t][^\r\n]*)*)",
    re.IGNORECASE | re.MULTILINE,
)


def _fields(head: bytes) -> dict[str, list[str]]:
    """The envelope's fields, unfolded (RFC 5322 2.2.3), by lower-cased name."""
    out: dict[str, list[str]] = {}
    for m in _ENVELOPE_FIELDS.finditer(head):
        value = _FOLD.sub(b" ", m.group(2)).strip()
        key = m.group(1).decode("ascii").lower()
        out.setdefault(key, []).append(value.decode("utf-8", "surrogateescape"))
    return out


def _stored(values: list[dict[str, str]]) -> bytes:
    out = []
    for a in values:
        mailbox, _, host = (a.get("email") or "").rpartition("@")
        out.append(
            plist(
                [
                    nstring(a.get("name") or None),
                    b"NIL",
                    nstring(mailbox or None),
                    nstring(host or None),
                ]
            )
        )
    return plist(out) if out else b"NIL"


def envelope_of(head: bytes, row: dict[str, Any]) -> bytes:
    """ENVELOPE from the raw header and the address columns the store parsed at
    delivery (RFC 5322 addresses with their names), used when they are plain
    ASCII: a FETCH of a folder's envelopes parses no address twice. Otherwise,
    and for Sender, Reply-To and Bcc, the header's own values are parsed."""
    fields = _fields(head)

    def one(name: str) -> bytes:
        values = fields.get(name)
        return nstring(values[0] if values and values[0] else None)

    def addrs(name: str) -> bytes:
        column = _STORED.get(name)
        stored = row.get(column) if column else None
        if stored is not None and all((a.get("name") or "").isascii() for a in stored):
            return _stored(stored)
        return _addresses(fields.get(name))

    from_ = addrs("from")
    return plist(
        [
            one("date"),
            one("subject"),
            from_,
            _addresses(fields["sender"]) if "sender" in fields else from_,
            _addresses(fields["reply-to"]) if "reply-to" in fields else from_,
            addrs("to"),
            addrs("cc"),
            _addresses(fields.get("bcc")),
            one("in-reply-to"),
            one("message-id"),
        ]
    )


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
    out = b"".join(
        f"{k}: {v}".encode("ascii", "surrogateescape")
        .replace(b"\r\n", b"\n")
        .replace(b"\n", b"\r\n")
        + b"\r\n"
        for k, v in msg.items()
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
