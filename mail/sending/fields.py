"""One email of a send request, checked field by field with Resend's names and messages.

A field absent is 422 ``missing_required_field`` ("Missing `to` field."), a
field with a wrong value 422 ``validation_error``, a bad from address 422
``invalid_from_address``, an attachment without content 422
``invalid_attachment``: the statuses Resend answers with.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from common.recipients import AddressRefused, check_recipient
from mail.errors import MailError, field_error
from mail.sending import schedule

FIELDS = frozenset(
    {
        "from", "to", "cc", "bcc", "reply_to", "subject", "html", "text",
        "tags", "headers", "attachments", "scheduled_at",
    }
)  # fmt: skip
# Resend's limit on `to`; and on every recipient of one email together.
MAX_TO = 50
MAX_RECIPIENTS = 100
MAX_SUBJECT = 998
MAX_BODY = 10 * 1024 * 1024
MAX_TAGS = 50
MAX_HEADERS = 50
# Decoded bytes of all attachments of one email (Resend: 40 MB per email).
MAX_ATTACHMENT_BYTES = 40 * 1000 * 1000
TAG = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
HEADER_NAME = re.compile(r"^[!-9;-~]{1,76}$")  # RFC 5322 ftext
# Header fields the message's own structure owns; a caller cannot set them.
RESERVED_HEADERS = frozenset(
    {
        "from", "to", "cc", "bcc", "reply-to", "subject", "date", "message-id", "sender",
        "mime-version", "content-type", "content-transfer-encoding", "content-disposition",
        "return-path", "received", "dkim-signature", "arc-seal", "arc-message-signature",
        "arc-authentication-results", "authentication-results",
    }
)  # fmt: skip
_SPECIALS = re.compile(r'[()<>\[\]:;@\\,."]')
_NAMED = re.compile(r'^\s*(?:"((?:[^"\\]|\\.)*)"|([^"<>]*?))\s*<([^<>]+)>\s*$')


@dataclass(frozen=True)
class Mailbox:
    """An address as given (``Name <a@b>`` or ``a@b``), checked."""

    name: str
    address: str  # ASCII, the domain lower-cased

    @property
    def domain(self) -> str:
        return self.address.rpartition("@")[2]

    def __str__(self) -> str:
        if not self.name:
            return self.address
        name = self.name
        if _SPECIALS.search(name):  # RFC 5322 specials: quote, so the string reads back
            name = '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return f"{name} <{self.address}>"


@dataclass(frozen=True)
class Attachment:
    filename: str
    content_type: str
    content: bytes
    content_id: str | None = None


@dataclass(frozen=True)
class Draft:
    sender: Mailbox
    to: list[Mailbox]
    subject: str
    cc: list[Mailbox] = field(default_factory=list)
    bcc: list[Mailbox] = field(default_factory=list)
    reply_to: list[Mailbox] = field(default_factory=list)
    html: str | None = None
    text: str | None = None
    tags: list[dict[str, str]] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    attachments: list[Attachment] = field(default_factory=list)
    scheduled_at: datetime | None = None

    @property
    def recipients(self) -> list[str]:
        """Envelope recipients: To, Cc and Bcc, each once (case-insensitively)."""
        seen: dict[str, str] = {}
        for box in [*self.to, *self.cc, *self.bcc]:
            seen.setdefault(box.address.lower(), box.address)
        return list(seen.values())


def missing(name: str) -> MailError:
    return MailError("missing_required_field", f"Missing `{name}` field.")


def _format_hint(name: str) -> str:
    return (
        f"Invalid `{name}` field. The email address needs to follow the"
        " `email@example.com` or `Name <email@example.com>` format."
    )


def mailbox(value: object, name: str) -> Mailbox:
    bad = MailError("invalid_from_address", _format_hint(name)) if name == "from" else None
    error = bad or field_error(_format_hint(name))
    if not isinstance(value, str) or len(value) > 320 or "\n" in value or "\r" in value:
        raise error
    display, addr = "", value.strip()
    match = _NAMED.match(value)
    if match:
        quoted, plain, addr = match.groups()
        display = (re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else plain or "").strip()
    try:
        # The syntax every sending path shares (.test accepted, RFC 6761 6.2).
        checked = check_recipient(addr.strip())
    except AddressRefused as exc:
        if exc.on_purpose:  # well formed, but never sent to: say why
            code = "invalid_from_address" if name == "from" else "validation_error"
            raise MailError(code, f"Invalid `{name}` field. {exc}.", status=422) from None
        raise error from None
    if checked.smtputf8:  # an internationalised local part needs SMTPUTF8
        raise error
    return Mailbox(display, checked.address)


def mailboxes(value: object, name: str, *, limit: int) -> list[Mailbox]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list):
        raise field_error(f"The `{name}` field must be a string or an array of strings.")
    if len(items) > limit:
        raise field_error(f"The `{name}` field can have at most {limit} addresses.")
    return [mailbox(item, name) for item in items]


def _text(data: dict[str, Any], name: str, limit: int) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise field_error(f"The `{name}` field must be a string.")
    if len(value) > limit:
        raise field_error(f"The `{name}` field is too long (at most {limit} characters).")
    return value


def tags(value: object) -> list[dict[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_TAGS:
        raise field_error(f"The `tags` field must be an array of at most {MAX_TAGS} tags.")
    out = []
    for tag in value:
        if not isinstance(tag, dict) or set(tag) - {"name", "value"}:
            raise field_error("Each tag must be an object with `name` and `value`.")
        name, val = tag.get("name"), tag.get("value", "")
        if not isinstance(name, str) or not TAG.match(name):
            raise field_error(
                "Tag names can only contain ASCII letters (a-z, A-Z), numbers (0-9),"
                " underscores (_), or dashes (-), up to 256 characters."
            )
        if not isinstance(val, str) or (val and not TAG.match(val)):
            raise field_error(
                "Tag values can only contain ASCII letters (a-z, A-Z), numbers (0-9),"
                " underscores (_), or dashes (-), up to 256 characters."
            )
        out.append({"name": name, "value": val})
    return out


def headers(value: object) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > MAX_HEADERS:
        raise field_error(f"The `headers` field must be an object of at most {MAX_HEADERS} fields.")
    out: dict[str, str] = {}
    for name, val in value.items():
        if not HEADER_NAME.match(name):
            raise field_error(f"The header name {name[:80]!r} is not a valid header field name.")
        if name.lower() in RESERVED_HEADERS:
            raise field_error(f"The `{name}` header is set from the email's own fields.")
        if not isinstance(val, str) or "\r" in val or "\n" in val or len(val) > 2000:
            raise field_error(f"The `{name}` header must be a single-line string.")
        out[name] = val
    return out


def _content(raw: object) -> bytes:
    if isinstance(raw, list):  # the Python SDK sends bytes as a list of integers
        if not all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b < 256 for b in raw):
            raise MailError("invalid_attachment", "Attachment content must be base64 or bytes.")
        return bytes(raw)
    if not isinstance(raw, str):
        raise MailError("invalid_attachment", "Attachment content must be base64 or bytes.")
    try:
        return base64.b64decode("".join(raw.split()), validate=True)
    except (binascii.Error, ValueError):
        raise MailError("invalid_attachment", "Attachment content must be base64.") from None


def attachments(value: object) -> list[Attachment]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise field_error("The `attachments` field must be an array.")
    out, total = [], 0
    for item in value:
        if not isinstance(item, dict):
            raise MailError("invalid_attachment", "Each attachment must be an object.")
        if item.get("content") is None:
            if item.get("path") is not None:
                # Fetching a URL the caller names is an SSRF surface; content only, for now.
                raise MailError(
                    "invalid_attachment",
                    "Attachments by `path` are not supported here: send the `content`.",
                )
            raise MailError(
                "invalid_attachment", "Attachment must have either a `content` or `path`."
            )
        filename = item.get("filename")
        if not isinstance(filename, str) or not filename.strip() or len(filename) > 255:
            raise MailError("invalid_attachment", "Attachment must have a `filename`.")
        content = _content(item["content"])
        total += len(content)
        if total > MAX_ATTACHMENT_BYTES:
            raise MailError("invalid_attachment", "Attachments are larger than 40 MB in all.")
        ctype = item.get("content_type") or mimetypes.guess_type(filename)[0]
        if not isinstance(ctype, str) or not re.match(r"^[\w.+-]+/[\w.+-]+$", ctype or ""):
            ctype = "application/octet-stream"
        cid = item.get("content_id") or item.get("inline_content_id")
        if cid is not None and (
            not isinstance(cid, str) or not re.match(r"^[\w.@+-]{1,128}$", cid)
        ):
            raise MailError("invalid_attachment", "Attachment `content_id` is not valid.")
        out.append(Attachment(filename.strip(), ctype, content, cid))
    return out


def draft(data: object, now: datetime) -> Draft:
    """One email of a request, or the first error found in it."""
    if not isinstance(data, dict):
        raise field_error("Each email must be a JSON object.")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise field_error(f"Unknown or unsupported field: `{unknown[0]}`.")
    for name in ("from", "to", "subject"):
        if data.get(name) in (None, "", []):
            raise missing(name)
    to = mailboxes(data["to"], "to", limit=MAX_TO)
    cc = mailboxes(data.get("cc") or [], "cc", limit=MAX_RECIPIENTS)
    bcc = mailboxes(data.get("bcc") or [], "bcc", limit=MAX_RECIPIENTS)
    subject = _text(data, "subject", MAX_SUBJECT) or ""
    if "\r" in subject or "\n" in subject:
        raise field_error("The `subject` field must be a single line.")
    html, text = _text(data, "html", MAX_BODY), _text(data, "text", MAX_BODY)
    if not html and not text:
        raise MailError("missing_required_field", "Missing `html` or `text` field.")
    result = Draft(
        sender=mailbox(data["from"], "from"),
        to=to,
        cc=cc,
        bcc=bcc,
        reply_to=mailboxes(data.get("reply_to") or [], "reply_to", limit=MAX_TO),
        subject=subject,
        html=html,
        text=text,
        tags=tags(data.get("tags")),
        headers=headers(data.get("headers")),
        attachments=attachments(data.get("attachments")),
        scheduled_at=(
            schedule.parse(data["scheduled_at"], now)
            if data.get("scheduled_at") is not None
            else None
        ),
    )
    if len(result.recipients) > MAX_RECIPIENTS:
        raise field_error(f"An email can have at most {MAX_RECIPIENTS} recipients in all.")
    return result
