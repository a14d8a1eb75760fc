"""Reading the header fields the store keeps from a raw RFC 5322 message.

Parsing never fails: mail from the internet is often malformed, and a
message we cannot read well is still stored whole (the raw bytes are the
truth; these fields only serve listings, search and threading).

The stdlib's compat32 parser is used, with RFC 2047 decoding done here: the
``policy.default`` parser is several times slower (10 ms for a 10 KB message
on a busy 2-core machine), and this runs for every message received.
"""

from __future__ import annotations

import email.utils
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.header import Header, decode_header, make_header
from email.message import Message
from email.parser import BytesHeaderParser, BytesParser

PREVIEW_LENGTH = 256
MAX_REFERENCES = 100
MSGID = re.compile(r"<([^<>\s]+)>")
_WS = re.compile(r"\s+")
_TAGS = re.compile(r"<[^>]*>")


@dataclass(frozen=True)
class ParsedMessage:
    message_id: str | None
    in_reply_to: list[str]
    references: list[str]
    subject: str
    from_addrs: list[dict[str, str]]
    to_addrs: list[dict[str, str]]
    cc_addrs: list[dict[str, str]]
    sent_at: datetime | None
    preview: str
    has_attachment: bool
    message: Message = field(repr=False)
    bcc_addrs: list[dict[str, str]] = field(default_factory=list)
    # Words of the text body parts, for full-text search (mta.email_words).
    body_text: str = field(default="", repr=False)

    @property
    def thread_keys(self) -> list[str]:
        """Message-ids that tie this message to a thread, its own first."""
        keys = [self.message_id] if self.message_id else []
        for ref in [*self.in_reply_to, *self.references]:
            if ref not in keys:
                keys.append(ref)
        return keys[: MAX_REFERENCES + 1]


_BLANK_LINE = re.compile(rb"\r?\n\r?\n")


def split_head(raw: bytes) -> tuple[bytes, bytes]:
    """The header block (with its last line break) and the body after the blank line."""
    end = _BLANK_LINE.search(raw)
    if end is None:
        return raw, b""
    return raw[: end.start() + (2 if raw[end.start()] == 13 else 1)], raw[end.end() :]


def read_message(raw: bytes) -> Message:
    """The message as compat32 parses it, without walking a single-part body line by line.

    The parser feeds every line of the body through its state machine even
    when only the headers matter: most of the cost of a 10 KB message. A
    single-part message gets its headers parsed and its body set as the
    payload whole, which is what the full parse produces for it; a multipart
    one is parsed in full, as its parts are needed.
    """
    head, body = split_head(raw)
    msg = BytesHeaderParser(policy=policy.compat32).parsebytes(head)
    if msg.get_content_maintype() == "multipart" or msg.defects:
        return BytesParser(policy=policy.compat32).parsebytes(raw)
    msg.set_payload(body.decode("ascii", "surrogateescape"))
    return msg


def parse_message(raw: bytes) -> ParsedMessage:
    msg = read_message(raw)
    return ParsedMessage(
        message_id=_first_msgid(_header(msg, "Message-ID")),
        in_reply_to=_msgids(_header(msg, "In-Reply-To"))[:MAX_REFERENCES],
        references=_msgids(_header(msg, "References"))[-MAX_REFERENCES:],
        subject=_clean(_header(msg, "Subject"))[:998],
        from_addrs=_addresses(msg, "From"),
        to_addrs=_addresses(msg, "To"),
        cc_addrs=_addresses(msg, "Cc"),
        sent_at=_date(_header(msg, "Date")),
        preview=_preview(msg),
        has_attachment=_has_attachment(msg),
        message=msg,
        bcc_addrs=_addresses(msg, "Bcc"),
        body_text=search_text(msg),
    )


def raw_text(value: object) -> str:
    """A header value as text: raw 8-bit bytes (SMTPUTF8 mail) read as UTF-8."""
    if isinstance(value, Header):  # compat32 wraps 8-bit values as unknown-8bit
        out = []
        for chunk, charset in decode_header(value):
            if isinstance(chunk, bytes):
                name = charset if charset and charset != "unknown-8bit" else "utf-8"
                try:
                    out.append(chunk.decode(name, errors="replace"))
                except LookupError:
                    out.append(chunk.decode("utf-8", errors="replace"))
            else:
                out.append(chunk)
        return "".join(out)
    return "" if value is None else str(value)


def decoded(value: object) -> str:
    """A header value with RFC 2047 encoded words decoded (raw UTF-8 passes through)."""
    value = raw_text(value)
    if "=?" not in value:
        return value
    try:
        return str(make_header(decode_header(value)))
    except Exception:
        return value


def header_values(msg: Message, name: str) -> list[str]:
    try:
        return [decoded(v) for v in msg.get_all(name) or []]
    except Exception:
        return []


def _header(msg: Message, name: str) -> str:
    values = header_values(msg, name)
    return values[0] if values else ""


def storable(value: str) -> str:
    """``value`` as a PostgreSQL text (or jsonb) value can hold it.

    Raw NUL bytes never reach here (the DATA stage refuses them), but decoding
    does make them: quoted-printable ``=00`` in a body, an encoded word in a
    header. That text is the message's data and the raw message keeps it; the
    columns that serve listings and search leave the NUL out (PostgreSQL text
    cannot hold one) and replace a lone surrogate, which UTF-8 cannot encode.
    """
    if "\x00" in value:
        value = value.replace("\x00", "")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "replace").decode("utf-8")
    return value


def _clean(value: str) -> str:
    return _WS.sub(" ", storable(value)).strip()


def _first_msgid(value: str) -> str | None:
    ids = _msgids(value)
    return ids[0] if ids else None


def _msgids(value: str) -> list[str]:
    return [m[:998] for m in MSGID.findall(storable(value))]


def _addresses(msg: Message, name: str) -> list[dict[str, str]]:
    try:
        raw_values = [raw_text(v) for v in msg.get_all(name) or []]
        pairs = email.utils.getaddresses(raw_values)
    except Exception:
        return []
    out = []
    for display, addr in pairs:
        addr = storable(addr).strip()
        if addr:
            out.append({"name": _clean(decoded(display)), "email": addr})
    return out[:100]


def _date(value: str) -> datetime | None:
    if not value:
        return None
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def text_body(msg: Message) -> tuple[str, str]:
    """(text, subtype) of the first text/plain part, else the first text/html one."""
    found: dict[str, Message] = {}
    for part in msg.walk():
        if part.is_multipart() or part.get_content_maintype() != "text":
            continue
        if (part.get("Content-Disposition") or "").lower().startswith("attachment"):
            continue
        found.setdefault(part.get_content_subtype(), part)
        if "plain" in found:
            break
    chosen = found.get("plain") or found.get("html")
    if chosen is None:
        return "", ""
    payload = chosen.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return "", ""
    charset = chosen.get_content_charset() or "utf-8"
    try:
        text = payload.decode(charset, errors="replace")
    except LookupError:  # an unknown charset name
        text = payload.decode("utf-8", errors="replace")
    return text, chosen.get_content_subtype()


def _preview(msg: Message) -> str:
    """Up to 256 characters of the text body, whitespace folded (RFC 8621 preview)."""
    try:
        text, subtype = text_body(msg)
    except Exception:
        return ""
    # Only the start matters: folding whitespace over a whole large body costs milliseconds.
    text = text[: PREVIEW_LENGTH * (40 if subtype == "html" else 4)]
    if subtype == "html":
        text = _TAGS.sub(" ", text)
    return _clean(text)[:PREVIEW_LENGTH]


SEARCH_TEXT_MAX = 100_000


def search_words(parsed: ParsedMessage) -> str:
    """What the body index holds for a message: its text body parts, then the Bcc
    names and addresses (RFC 8621 4.4.1: ``text`` and ``body`` search cover them)."""
    return " ".join([parsed.body_text, *(f"{a['name']} {a['email']}" for a in parsed.bcc_addrs)])


def search_text(msg: Message) -> str:
    """The text of every inline text/plain part (text/html ones, tags out, when there
    is no plain text), up to ``SEARCH_TEXT_MAX`` characters, for the body index."""
    try:
        plain: list[str] = []
        html: list[str] = []
        for part in msg.walk():
            if part.is_multipart() or part.get_content_maintype() != "text":
                continue
            if (part.get("Content-Disposition") or "").lower().startswith("attachment"):
                continue
            subtype = part.get_content_subtype()
            if subtype not in ("plain", "html"):
                continue
            payload = part.get_payload(decode=True)
            if not isinstance(payload, bytes):
                continue
            try:
                text = payload.decode(part.get_content_charset() or "utf-8", errors="replace")
            except LookupError:
                text = payload.decode("utf-8", errors="replace")
            (plain if subtype == "plain" else html).append(text)
    except Exception:
        return ""
    text = " ".join(plain) if plain else _TAGS.sub(" ", " ".join(html))
    return storable(text[:SEARCH_TEXT_MAX])


def _has_attachment(msg: Message) -> bool:
    try:
        return any(
            (part.get("Content-Disposition") or "").lower().startswith("attachment")
            for part in msg.walk()
        )
    except Exception:
        return False
