"""A raw message as RFC 8621 4.1 sees it: header fields in their parsed forms, the
body structure, textBody/htmlBody/attachments and body values.

Parsed with the stdlib's ``policy.default`` (its header registry parses
addresses, dates and message ids) from the raw bytes, only when a client asks
for a property that the email row does not hold (mta/jmap/email/get.py).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email._header_value_parser import get_address_list  # the parser behind policy.default
from email.header import decode_header, make_header
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.policy import EmailPolicy
from email.utils import parsedate_to_datetime
from typing import Any

from mta.jmap.email.errors import MethodError

# Part blob ids: "<sha256 of the message>.<partId>" (a message's own blob id is the bare sha256).
PART_SEPARATOR = "."

HEADER_FORMS = (
    "asRaw",
    "asText",
    "asAddresses",
    "asGroupedAddresses",
    "asMessageIds",
    "asDate",
    "asURLs",
)
_ADDRESS_FIELDS = {
    "from", "sender", "reply-to", "to", "cc", "bcc",
    "resent-from", "resent-sender", "resent-reply-to", "resent-to", "resent-cc", "resent-bcc",
}  # fmt: skip
_ALLOWED: dict[str, set[str]] = {
    "asText": {"subject", "comments", "keywords", "list-id"},
    "asAddresses": _ADDRESS_FIELDS,
    "asGroupedAddresses": _ADDRESS_FIELDS,
    "asMessageIds": {"message-id", "in-reply-to", "references", "resent-message-id"},
    "asDate": {"date", "resent-date"},
    "asURLs": {
        "list-help", "list-unsubscribe", "list-subscribe", "list-post", "list-owner", "list-archive",
    },
}  # fmt: skip
# RFC 8621 4.1.2: a field named there answers only the forms listed for it; any
# other field answers every form.
_KNOWN = set().union(*_ALLOWED.values())

DEFAULT_BODY_PROPERTIES = (
    "partId", "blobId", "size", "name", "type", "charset", "disposition", "cid", "language",
    "location",
)  # fmt: skip
BODY_PROPERTIES = {*DEFAULT_BODY_PROPERTIES, "headers", "subParts"}
_MSGID = re.compile(r"<([^<>\s]+)>")
_URL = re.compile(r"<([^<>]*)>")
_HEADER_NAME = re.compile(r"^[\x21-\x39\x3b-\x7e]+$")


@dataclass(frozen=True)
class HeaderProperty:
    """A parsed ``header:{name}[:as{Form}][:all]`` property name."""

    property: str
    name: str
    form: str
    all: bool


def header_property(prop: str) -> HeaderProperty:
    """Parse a ``header:`` property name, or raise invalidArguments (RFC 8621 4.1.3)."""
    parts = prop.split(":")
    if len(parts) < 2 or len(parts) > 4 or parts[0] != "header" or not _HEADER_NAME.match(parts[1]):
        raise MethodError("invalidArguments", f"bad header property {prop!r}")
    rest = parts[2:]
    all_ = bool(rest) and rest[-1] == "all"
    if all_:
        rest = rest[:-1]
    form = rest[0] if rest else "asRaw"
    if len(rest) > 1 or form not in HEADER_FORMS:
        raise MethodError("invalidArguments", f"bad header property {prop!r}")
    name = parts[1].lower()
    if form != "asRaw" and name in _KNOWN and name not in _ALLOWED[form]:
        raise MethodError("invalidArguments", f"{parts[1]} cannot be read {form}")
    return HeaderProperty(prop, name, form, all_)


class _RawValues(EmailPolicy):
    """policy.default, keeping the whitespace after a field's colon: asRaw is
    "the raw octets of the header field value from the first octet following
    the header field name terminating colon" (RFC 8621 4.1.2.1)."""

    def header_source_parse(self, sourcelines: list[str]) -> tuple[str, str]:
        name, value = sourcelines[0].split(":", 1)
        return (name, (value + "".join(sourcelines[1:])).rstrip("\r\n"))

    def header_fetch_parse(self, name: str, value: str) -> Any:
        # Parsed values (msg[name], the content-* rules) see it as policy.default does.
        return super().header_fetch_parse(name, value.lstrip(" \t"))


RAW_POLICY = _RawValues()


def parse_raw(raw: bytes) -> EmailMessage:
    msg = BytesParser(policy=RAW_POLICY).parsebytes(raw)
    assert isinstance(msg, EmailMessage)
    return msg


def _text(value: str) -> str:
    """A header value as stored by the parser (8-bit bytes as surrogates) as text."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def raw_headers(msg: Message) -> list[dict[str, str]]:
    """Every header field in order, values raw (folding kept), as EmailHeader objects."""
    out = []
    for name, value in msg.raw_items():
        value = _text(str(value))
        out.append({"name": name, "value": value if value[:1] in (" ", "\t") else " " + value})
    return out


def _values(msg: Message, name: str) -> list[str]:
    return [h["value"] for h in raw_headers(msg) if h["name"].lower() == name]


def _unfold(value: str) -> str:
    return re.sub(r"\r?\n(?=[ \t])", "", value)


def as_text(value: str) -> str:
    value = _unfold(value)
    if "=?" in value:
        with contextlib.suppress(Exception):
            value = str(make_header(decode_header(value)))
    return value.strip()


def _address(name: str | None, email: str) -> dict[str, Any]:
    return {"name": name or None, "email": email}


def as_grouped_addresses(value: str) -> list[dict[str, Any]]:
    try:
        parsed, _ = get_address_list(_unfold(value))
    except Exception:
        return []
    groups: list[dict[str, Any]] = []
    for item in parsed.addresses:
        if item and item[0].token_type == "group":
            group = item[0]
            members = getattr(group, "all_mailboxes", []) or []
            groups.append(
                {
                    "name": as_text(getattr(group, "display_name", "") or "") or None,
                    "addresses": [_mailbox(m) for m in members],
                }
            )
        else:
            for mb in item.all_mailboxes:
                if groups and groups[-1]["name"] is None:
                    groups[-1]["addresses"].append(_mailbox(mb))
                else:
                    groups.append({"name": None, "addresses": [_mailbox(mb)]})
    return groups


def _mailbox(mb: Any) -> dict[str, Any]:
    local = mb.local_part or ""
    domain = mb.domain
    email = f"{local}@{domain}" if domain else local
    name = mb.display_name
    return _address(as_text(name) if name else None, email)


def as_addresses(value: str) -> list[dict[str, Any]]:
    return [a for g in as_grouped_addresses(value) for a in g["addresses"]]


def as_message_ids(value: str) -> list[str] | None:
    ids = _MSGID.findall(_unfold(value))
    return ids or None


def as_date(value: str) -> str | None:
    try:
        parsed = parsedate_to_datetime(_unfold(value).strip())
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:
        return utc_date(parsed.replace(tzinfo=UTC))
    return parsed.isoformat()


def utc_date(value: datetime) -> str:
    """A JMAP UTCDate: "2014-10-30T06:12:00Z"."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def as_urls(value: str) -> list[str] | None:
    urls = [u.strip() for u in _URL.findall(_unfold(value))]
    return urls or None


_FORMS = {
    "asRaw": lambda v: v,
    "asText": as_text,
    "asAddresses": as_addresses,
    "asGroupedAddresses": as_grouped_addresses,
    "asMessageIds": as_message_ids,
    "asDate": as_date,
    "asURLs": as_urls,
}


def header_value(msg: Message, prop: HeaderProperty) -> Any:
    values = [_FORMS[prop.form](v) for v in _values(msg, prop.name)]
    if prop.all:
        return values
    return values[-1] if values else None


# --- body structure -------------------------------------------------------------


@dataclass
class Part:
    """A node of the body structure with what 4.1.4 needs of it."""

    part_id: str | None
    message: Message
    type: str
    size: int
    sub_parts: list[Part] = field(default_factory=list)

    @property
    def disposition(self) -> str | None:
        value = self.message.get_content_disposition()
        return value.lower() if value else None

    @property
    def name(self) -> str | None:
        name = self.message.get_filename()
        if name is None and self.type.startswith("multipart/"):
            return None
        return name if name is None else as_text(_text(str(name)))

    def is_multipart(self) -> bool:
        return self.type.startswith("multipart/")

    def content(self) -> bytes:
        """The decoded content (transfer encoding undone) of a leaf part."""
        msg = self.message
        if self.type == "message/rfc822" or msg.get_content_maintype() == "message":
            payload = msg.get_payload()
            if isinstance(payload, list) and payload and isinstance(payload[0], Message):
                return bytes(payload[0].as_bytes(policy=policy.SMTPUTF8))
            data = msg.get_payload(decode=True)
            return data if isinstance(data, bytes) else _payload_bytes(msg)
        data = msg.get_payload(decode=True)
        return data if isinstance(data, bytes) else b""


def _payload_bytes(msg: Message) -> bytes:
    payload = msg.get_payload()
    if isinstance(payload, str):
        return payload.encode("utf-8", "surrogateescape")
    return b""


def structure(msg: Message) -> Part:
    """The body structure with partIds "1", "2", ... for leaves in document order."""
    counter = iter(range(1, 1_000_000))

    def walk(m: Message) -> Part:
        ctype = m.get_content_type().lower()
        payload = m.get_payload()
        if ctype.startswith("multipart/") and isinstance(payload, list):
            subs = [walk(s) for s in payload if isinstance(s, Message)]
            return Part(None, m, ctype, sum(s.size for s in subs), subs)
        part = Part(str(next(counter)), m, ctype, 0)
        part.size = len(part.content())
        return part

    return walk(msg)


def leaves(part: Part) -> Iterator[Part]:
    if part.is_multipart():
        for sub in part.sub_parts:
            yield from leaves(sub)
    else:
        yield part


def _inline_media(ctype: str) -> bool:
    return ctype.startswith(("image/", "audio/", "video/"))


def body_lists(root: Part) -> tuple[list[Part], list[Part], list[Part]]:
    """textBody, htmlBody and attachments: the algorithm of RFC 8621 4.1.4, as written."""
    text: list[Part] = []
    html: list[Part] = []
    attachments: list[Part] = []

    def parse(
        parts: list[Part],
        multipart_type: str,
        in_alternative: bool,
        html_body: list[Part] | None,
        text_body: list[Part] | None,
    ) -> None:
        text_length = len(text_body) if text_body is not None else -1
        html_length = len(html_body) if html_body is not None else -1
        for i, part in enumerate(parts):
            is_inline = (
                part.disposition != "attachment"
                and (part.type in ("text/plain", "text/html") or _inline_media(part.type))
                and (
                    i == 0
                    or (multipart_type != "related" and (_inline_media(part.type) or not part.name))
                )
            )
            if part.is_multipart():
                sub = part.type.split("/", 1)[1]
                parse(
                    part.sub_parts,
                    sub,
                    in_alternative or sub == "alternative",
                    html_body,
                    text_body,
                )
            elif is_inline:
                if multipart_type == "alternative":
                    if part.type == "text/plain" and text_body is not None:
                        text_body.append(part)
                    elif part.type == "text/html" and html_body is not None:
                        html_body.append(part)
                    else:
                        attachments.append(part)
                    continue
                if in_alternative:
                    if part.type == "text/plain":
                        html_body = None
                    if part.type == "text/html":
                        text_body = None
                if text_body is not None:
                    text_body.append(part)
                if html_body is not None:
                    html_body.append(part)
                if (text_body is None or html_body is None) and _inline_media(part.type):
                    attachments.append(part)
            else:
                attachments.append(part)
        if multipart_type == "alternative" and text_body is not None and html_body is not None:
            if text_length == len(text_body) and html_length != len(html_body):
                text_body.extend(html_body[html_length:])
            if html_length == len(html_body) and text_length != len(text_body):
                html_body.extend(text_body[text_length:])

    parse([root], "mixed", False, html, text)
    return text, html, attachments


def body_part(part: Part, blob_id: str | None, props: list[str]) -> dict[str, Any]:
    """An EmailBodyPart object with the asked ``bodyProperties``."""
    out: dict[str, Any] = {}
    msg = part.message
    for prop in props:
        if prop == "partId":
            out[prop] = part.part_id
        elif prop == "blobId":
            out[prop] = (
                f"{blob_id}{PART_SEPARATOR}{part.part_id}" if blob_id and part.part_id else None
            )
        elif prop == "size":
            out[prop] = part.size
        elif prop == "headers":
            out[prop] = raw_headers(msg)
        elif prop == "name":
            out[prop] = part.name
        elif prop == "type":
            out[prop] = part.type
        elif prop == "charset":
            charset = msg.get_param("charset")
            if charset is None and part.type.startswith("text/"):
                charset = "us-ascii"
            out[prop] = None if part.is_multipart() or charset is None else str(charset)
        elif prop == "disposition":
            out[prop] = part.disposition
        elif prop == "cid":
            cid = msg.get("Content-Id")
            ids = as_message_ids(_text(str(cid))) if cid else None
            out[prop] = ids[0] if ids else None
        elif prop == "language":
            lang = msg.get("Content-Language")
            out[prop] = (
                [v.strip() for v in as_text(_text(str(lang))).split(",") if v.strip()]
                if lang
                else None
            )
        elif prop == "location":
            loc = msg.get("Content-Location")
            out[prop] = as_text(_text(str(loc))) if loc else None
        elif prop == "subParts":
            out[prop] = (
                [body_part(s, blob_id, props) for s in part.sub_parts]
                if part.is_multipart()
                else None
            )
        elif prop.startswith("header:"):
            out[prop] = header_value(msg, header_property(prop))
    return out


def find_part(root: Part, part_id: str) -> Part | None:
    return next((p for p in leaves(root) if p.part_id == part_id), None)


def body_value(part: Part, max_bytes: int) -> dict[str, Any]:
    """An EmailBodyValue: the text of a text/* part, decoded from its charset."""
    data = part.content()
    charset = part.message.get_param("charset") or "us-ascii"
    problem = False
    try:
        text = data.decode(str(charset))
    except LookupError:
        text, problem = data.decode("utf-8", "replace"), True
    except UnicodeDecodeError:
        # us-ascii is often a lie (8-bit mail without a charset): UTF-8 first.
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text, problem = data.decode(str(charset), "replace"), True
    if (
        part.message.get("Content-Transfer-Encoding", "").lower() == "base64"
        and data == b""
        and part.message.get_payload()
    ):
        problem = True
    text = text.replace("\r\n", "\n")
    truncated = False
    if max_bytes > 0:
        encoded = text.encode("utf-8")
        if len(encoded) > max_bytes:
            text = encoded[:max_bytes].decode("utf-8", "ignore")
            truncated = True
    return {"value": text, "isEncodingProblem": problem, "isTruncated": truncated}


def preview_of(text_parts: list[Part]) -> str:
    for part in text_parts:
        if part.type in ("text/plain", "text/html"):
            text = body_value(part, 64 * 1024)["value"]
            if part.type == "text/html":
                text = re.sub(r"<[^>]*>", " ", text)
            return re.sub(r"\s+", " ", text).strip()[:256]
    return ""
