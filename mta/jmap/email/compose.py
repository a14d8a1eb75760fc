"""Email/set create (RFC 8621 4.6): a message built from its JMAP properties.

Header fields come from the convenience properties and ``header:`` forms;
the body from ``bodyStructure``, or from ``textBody``/``htmlBody``/
``attachments`` (text and HTML side by side make multipart/alternative, inline
parts with a cid a multipart/related around it, attachments a multipart/mixed
at the top). Part content is a ``bodyValues`` entry (by ``partId``) or a blob
(by ``blobId``). Serialized with ``policy.SMTP``: CRLF lines, RFC 2047 for
non-ASCII header text.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from email import policy
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from mta.jmap.email import mime

BlobReader = Callable[[str], Awaitable[bytes | None]]

_HEADER_PROPS = {
    "messageId": ("Message-ID", "asMessageIds"),
    "inReplyTo": ("In-Reply-To", "asMessageIds"),
    "references": ("References", "asMessageIds"),
    "sender": ("Sender", "asAddresses"),
    "from": ("From", "asAddresses"),
    "to": ("To", "asAddresses"),
    "cc": ("Cc", "asAddresses"),
    "bcc": ("Bcc", "asAddresses"),
    "replyTo": ("Reply-To", "asAddresses"),
    "subject": ("Subject", "asText"),
    "sentAt": ("Date", "asDate"),
}
METADATA = {"mailboxIds", "keywords", "receivedAt"}
BODY = {"bodyStructure", "textBody", "htmlBody", "attachments", "bodyValues"}
SERVER_SET = {"id", "blobId", "threadId", "size", "hasAttachment", "preview"}
_CONTENT_HEADERS = re.compile(r"^content-", re.I)


class Invalid(Exception):
    """A create the server cannot build: answered as an invalidProperties SetError."""

    def __init__(
        self,
        description: str,
        properties: list[str] | None = None,
        *,
        type: str = "invalidProperties",
    ) -> None:
        super().__init__(description)
        self.properties = properties or []
        self.type = type  # the SetError type: invalidProperties, tooManyMailboxes, tooLarge


def _address_list(value: Any, prop: str) -> str:
    if not isinstance(value, list):
        raise Invalid(f"{prop} is a list of EmailAddress", [prop])
    out = []
    for item in value:
        if not isinstance(item, Mapping) or not isinstance(item.get("email"), str):
            raise Invalid(f"{prop} is a list of EmailAddress", [prop])
        try:
            out.append(str(Address(display_name=item.get("name") or "", addr_spec=item["email"])))
        except Exception as exc:
            raise Invalid(f"{prop}: bad address {item['email']!r}", [prop]) from exc
    return ", ".join(out)


def header_text(form: str, value: Any, prop: str) -> str | None:
    """A value of a ``header:`` form as the field's text (None leaves it out)."""
    if value is None:
        return None
    if form in ("asRaw", "asText"):
        if not isinstance(value, str):
            raise Invalid(f"{prop} is a string", [prop])
        return value.strip()
    if form == "asAddresses":
        return _address_list(value, prop)
    if form == "asGroupedAddresses":
        if not isinstance(value, list):
            raise Invalid(f"{prop} is a list of EmailAddressGroup", [prop])
        groups = []
        for g in value:
            members = _address_list(g.get("addresses") or [], prop)
            groups.append(f"{g['name']}: {members};" if g.get("name") else members)
        return ", ".join(x for x in groups if x)
    if form == "asMessageIds":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise Invalid(f"{prop} is a list of ids", [prop])
        return " ".join(f"<{v}>" for v in value)
    if form == "asDate":
        try:
            return format_datetime(datetime.fromisoformat(str(value).replace("Z", "+00:00")))
        except ValueError as exc:
            raise Invalid(f"{prop} is a Date", [prop]) from exc
    if form == "asURLs":
        if not isinstance(value, list):
            raise Invalid(f"{prop} is a list of URLs", [prop])
        return ", ".join(f"<{v}>" for v in value)
    raise Invalid(f"bad form {form}", [prop])


def top_headers(create: Mapping[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for prop, value in create.items():
        if prop in _HEADER_PROPS:
            name, form = _HEADER_PROPS[prop]
            text = header_text(form, value, prop)
        elif prop.startswith("header:"):
            try:
                parsed = mime.header_property(prop)
            except Exception as exc:
                raise Invalid(f"bad property {prop}", [prop]) from exc
            if parsed.all:
                for item in value or []:
                    item_text = header_text(parsed.form, item, prop)
                    if item_text is not None:
                        out.append((prop.split(":")[1], item_text))
                continue
            name, text = prop.split(":")[1], header_text(parsed.form, value, prop)
            if _CONTENT_HEADERS.match(name):
                raise Invalid("Content-* fields are set by the body properties", [prop])
        elif prop == "headers":
            for h in value or []:
                out.append((h["name"], h["value"].strip()))
            continue
        else:
            continue
        if text is not None:
            out.append((name, text))
    return out


class Builder:
    def __init__(self, create: Mapping[str, Any], read_blob: BlobReader) -> None:
        self.create = create
        self.values = create.get("bodyValues") or {}
        if not isinstance(self.values, Mapping):
            raise Invalid("bodyValues is a map", ["bodyValues"])
        self.read_blob = read_blob

    async def leaf(self, spec: Mapping[str, Any], prop: str) -> EmailMessage:
        if not isinstance(spec, Mapping):
            raise Invalid(f"{prop} holds EmailBodyPart objects", [prop])
        ctype = str(
            spec.get("type") or ("text/plain" if "partId" in spec else "application/octet-stream")
        ).lower()
        maintype, _, subtype = ctype.partition("/")
        part = EmailMessage(policy=policy.SMTP)
        extra: dict[str, Any] = {}
        if spec.get("disposition"):
            extra["disposition"] = spec["disposition"]
        if spec.get("name"):
            extra["filename"] = spec["name"]
            extra.setdefault("disposition", "attachment")
        if spec.get("cid"):
            extra["cid"] = f"<{spec['cid']}>"
        if spec.get("partId") is not None:
            value = self.values.get(spec["partId"])
            if not isinstance(value, Mapping) or not isinstance(value.get("value"), str):
                raise Invalid(f"no bodyValues entry for partId {spec['partId']!r}", ["bodyValues"])
            if value.get("isTruncated") or value.get("isEncodingProblem"):
                raise Invalid("a body value to store cannot be truncated", ["bodyValues"])
            if maintype != "text":
                raise Invalid("a partId names text content", [prop])
            part.set_content(value["value"], subtype=subtype or "plain", charset="utf-8", **extra)
        elif isinstance(spec.get("blobId"), str):
            data = await self.read_blob(spec["blobId"])
            if data is None:
                raise BlobMissing(spec["blobId"])
            if maintype == "text":
                charset = str(spec.get("charset") or "utf-8")
                try:
                    text = data.decode(charset)
                except (LookupError, UnicodeDecodeError):
                    part.set_content(data, maintype, subtype, **extra)
                else:
                    part.set_content(text, subtype=subtype, charset="utf-8", **extra)
            elif maintype == "message" or maintype == "multipart":
                part.set_content(data, "application", "octet-stream", **extra)
                part.replace_header("Content-Type", ctype)
            else:
                part.set_content(data, maintype, subtype or "octet-stream", **extra)
        else:
            raise Invalid(f"a body part needs a partId or a blobId ({prop})", [prop])
        del part["MIME-Version"]  # set_content adds one; it belongs at the top only
        if spec.get("language"):
            part["Content-Language"] = ", ".join(spec["language"])
        if spec.get("location"):
            part["Content-Location"] = spec["location"]
        for h in spec.get("headers") or []:
            if not _CONTENT_HEADERS.match(h["name"]):
                part[h["name"]] = h["value"].strip()
        return part

    async def tree(self, spec: Mapping[str, Any]) -> EmailMessage:
        if not isinstance(spec, Mapping):
            raise Invalid("bodyStructure is an EmailBodyPart", ["bodyStructure"])
        subs = spec.get("subParts")
        if subs:
            ctype = str(spec.get("type") or "multipart/mixed").lower()
            if not ctype.startswith("multipart/"):
                raise Invalid("subParts belong to multipart types", ["bodyStructure"])
            return multipart(ctype.split("/", 1)[1], [await self.tree(s) for s in subs])
        return await self.leaf(spec, "bodyStructure")

    async def body(self) -> EmailMessage:
        c = self.create
        if c.get("bodyStructure") is not None:
            if any(c.get(k) for k in ("textBody", "htmlBody", "attachments")):
                raise Invalid(
                    "bodyStructure excludes textBody, htmlBody and attachments", ["bodyStructure"]
                )
            return await self.tree(c["bodyStructure"])
        text_body = c.get("textBody") or []
        html_body = c.get("htmlBody") or []
        for prop, parts, ctype in (
            ("textBody", text_body, "text/plain"),
            ("htmlBody", html_body, "text/html"),
        ):
            if not isinstance(parts, list) or len(parts) > 1:
                raise Invalid(f"{prop} holds at most one part", [prop])
            if parts and str(parts[0].get("type") or ctype).lower() != ctype:
                raise Invalid(f"{prop} is {ctype}", [prop])
        text = [await self.leaf({"type": "text/plain", **p}, "textBody") for p in text_body]
        html = [await self.leaf({"type": "text/html", **p}, "htmlBody") for p in html_body]
        attachments = c.get("attachments") or []
        inline_specs = [
            a for a in attachments if a.get("cid") and a.get("disposition") != "attachment"
        ]
        others = [a for a in attachments if a not in inline_specs]
        if text and html:
            core = multipart("alternative", [*text, *html])
        elif text or html:
            core = (text or html)[0]
        else:
            core = EmailMessage(policy=policy.SMTP)
            core.set_content("", subtype="plain", charset="utf-8")
        if inline_specs:
            related = [await self.leaf(a, "attachments") for a in inline_specs]
            if html and text:
                html_part = multipart("related", [html[0], *related])
                core = multipart("alternative", [text[0], html_part])
            else:
                core = multipart("related", [core, *related])
        if others:
            core = multipart("mixed", [core, *[await self.leaf(a, "attachments") for a in others]])
        return core


class BlobMissing(Exception):
    def __init__(self, blob_id: str) -> None:
        super().__init__(blob_id)
        self.blob_id = blob_id


def multipart(subtype: str, parts: list[EmailMessage]) -> EmailMessage:
    msg = EmailMessage(policy=policy.SMTP)
    msg["Content-Type"] = f"multipart/{subtype}"
    for p in parts:
        msg.attach(p)
    return msg


async def build(
    create: Mapping[str, Any], read_blob: BlobReader, *, now: datetime, hostname: str
) -> bytes:
    """The raw message of an EmailCreate."""
    body = await Builder(create, read_blob).body()
    top = EmailMessage(policy=policy.SMTP)
    headers = top_headers(create)
    names = {n.lower() for n, _ in headers}
    if "message-id" not in names:
        headers.append(("Message-ID", f"<{secrets.token_hex(12)}@{hostname}>"))
    if "date" not in names:
        headers.append(("Date", format_datetime(now)))
    headers.append(("MIME-Version", "1.0"))
    for name, value in headers:
        try:
            top[name] = value
        except Exception as exc:
            raise Invalid(f"bad value for {name}", [name]) from exc
    for name, value in body.items():
        top[name] = value
    top.set_payload(body.get_payload())
    return top.as_bytes(policy=policy.SMTP)
