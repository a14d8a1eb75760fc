"""Reading the header fields the store keeps from a raw RFC 5322 message.

Parsing never fails: mail from the internet is often malformed, and a
message we cannot read well is still stored whole (the raw bytes are the
truth; these fields only serve listings, search and threading).
"""

from __future__ import annotations

import email.utils
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser

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

    @property
    def thread_keys(self) -> list[str]:
        """Message-ids that tie this message to a thread, its own first."""
        keys = [self.message_id] if self.message_id else []
        for ref in [*self.in_reply_to, *self.references]:
            if ref not in keys:
                keys.append(ref)
        return keys[: MAX_REFERENCES + 1]


def parse_message(raw: bytes) -> ParsedMessage:
    msg = BytesParser(policy=policy.default).parsebytes(raw)
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
    )


def _header(msg: Message, name: str) -> str:
    try:
        value = msg.get(name)
    except Exception:  # a malformed header the parser chokes on
        return ""
    return "" if value is None else str(value)


def _clean(value: str) -> str:
    return _WS.sub(" ", value).strip()


def _first_msgid(value: str) -> str | None:
    ids = _msgids(value)
    return ids[0] if ids else None


def _msgids(value: str) -> list[str]:
    return [m[:998] for m in MSGID.findall(value)]


def _addresses(msg: Message, name: str) -> list[dict[str, str]]:
    try:
        values = msg.get_all(name) or []
        pairs = email.utils.getaddresses([str(v) for v in values])
    except Exception:
        return []
    return [{"name": _clean(n), "email": a.strip()} for n, a in pairs if a.strip()][:100]


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


def _preview(msg: Message) -> str:
    """Up to 256 characters of the text body, whitespace folded (RFC 8621 preview)."""
    if not isinstance(msg, EmailMessage):
        return ""
    try:
        part = msg.get_body(preferencelist=("plain", "html"))
        if part is None:
            return ""
        text = part.get_content()
    except Exception:
        return ""
    if not isinstance(text, str):
        return ""
    if part.get_content_subtype() == "html":
        text = _TAGS.sub(" ", text)
    return _clean(text)[:PREVIEW_LENGTH]


def _has_attachment(msg: Message) -> bool:
    if not isinstance(msg, EmailMessage):
        return False
    try:
        return any(True for _ in msg.iter_attachments()) if msg.is_multipart() else False
    except Exception:
        return False
