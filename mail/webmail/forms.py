"""The body of a send or a draft: JSON, or multipart/form-data with attachments.

The spec has no upload route, so attachments travel with the message:
``multipart/form-data`` with one ``message`` field holding the JSON fields
below and any number of ``attachments`` file fields. Each file is read in
64 KiB chunks into a spooled temporary file (memory up to 1 MiB, then
disk), counted as it streams, and refused (413) past 25 MB in all, before
the rest is read; the finished message goes to the blob store when it is
stored (Sent, Drafts). A plain JSON body is the same fields without files.

Fields: ``to``, ``cc``, ``bcc`` (a string or an array of ``a@b`` /
``Name <a@b>``), ``subject``, ``text``, ``html``, ``reply_to_id`` (the
message answered: threaded with In-Reply-To and References),
``forward_id`` (the message forwarded: its attachments come along),
``draft_id`` (the draft updated, or sent), ``drop_attachments`` (sections
of the draft's or forwarded message's attachments to leave out).
"""

from __future__ import annotations

import json
import mimetypes
import re
import tempfile
from typing import Any

from aiohttp import BodyPartReader, web

from mail.errors import MailError, validation_error
from mail.sending.fields import Attachment, mailboxes
from mail.web.body import optional_str, read_body
from mail.webmail.messages import Compose

FIELDS = frozenset(
    {"to", "cc", "bcc", "subject", "text", "html", "reply_to_id", "forward_id", "draft_id",
     "drop_attachments"}
)  # fmt: skip
MAX_ATTACHMENT_BYTES = 25 * 1000 * 1000
MAX_ATTACHMENTS = 50
MAX_TEXT = 5 * 1024 * 1024
CHUNK = 64 * 1024
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def too_large() -> MailError:
    return MailError(
        "quota_exceeded",
        f"attachments are limited to {MAX_ATTACHMENT_BYTES // 1_000_000} MB in all",
    )


async def read_compose(request: web.Request) -> Compose:
    if request.content_type == "multipart/form-data":
        data, files = await _multipart(request)
    else:
        data, files = await read_body(request, allowed=FIELDS), []
    return compose_from(data, files)


async def _multipart(request: web.Request) -> tuple[dict[str, Any], list[Attachment]]:
    reader = await request.multipart()
    data: dict[str, Any] = {}
    files: list[Attachment] = []
    total = 0
    while (part := await reader.next()) is not None:
        if not isinstance(part, BodyPartReader):
            raise validation_error("nested multipart is not accepted")
        if part.name == "message":
            raw = await part.read(decode=True)
            if len(raw) > MAX_TEXT * 2:
                raise validation_error("the message field is too large")
            try:
                data = json.loads(raw or b"{}")
            except ValueError:
                raise validation_error("the message field is not valid JSON") from None
            if not isinstance(data, dict):
                raise validation_error("the message field must be a JSON object")
            unknown = sorted(set(data) - FIELDS)
            if unknown:
                raise validation_error(f"unknown field: {', '.join(unknown)}")
        elif part.name == "attachments":
            if len(files) >= MAX_ATTACHMENTS:
                raise validation_error(f"at most {MAX_ATTACHMENTS} attachments")
            filename = (part.filename or "attachment").strip()[:255] or "attachment"
            with tempfile.SpooledTemporaryFile(max_size=1 << 20) as spool:
                while chunk := await part.read_chunk(CHUNK):
                    total += len(chunk)
                    if total > MAX_ATTACHMENT_BYTES:
                        raise too_large()
                    spool.write(chunk)
                spool.seek(0)
                content = spool.read()
            ctype = part.headers.get("Content-Type", "") or mimetypes.guess_type(filename)[0] or ""
            if not re.match(r"^[\w.+-]+/[\w.+-]+$", ctype):
                ctype = "application/octet-stream"
            files.append(Attachment(filename, ctype.lower(), content))
        else:
            raise validation_error(f"unknown form field: {part.name}")
    return data, files


def _id(data: dict[str, Any], name: str) -> str | None:
    value = optional_str(data, name, max_length=36)
    if value is not None and not _UUID.match(value):
        raise validation_error(f"{name} must be a message id")
    return value


def compose_from(data: dict[str, Any], files: list[Attachment]) -> Compose:
    def boxes(name: str) -> list[Any]:
        value = data.get(name)
        if value in (None, "", []):
            return []
        if isinstance(value, str):
            value = [v for v in value.split(",") if v.strip()]
        return mailboxes(value, name, limit=100)

    drop = data.get("drop_attachments") or []
    if not isinstance(drop, list) or not all(isinstance(d, str) for d in drop):
        raise validation_error("drop_attachments must be an array of sections")
    return Compose(
        to=boxes("to"),
        cc=boxes("cc"),
        bcc=boxes("bcc"),
        subject=optional_str(data, "subject", max_length=998, default="") or "",
        text=optional_str(data, "text", max_length=MAX_TEXT),
        html=optional_str(data, "html", max_length=MAX_TEXT),
        reply_to_id=_id(data, "reply_to_id"),
        forward_id=_id(data, "forward_id"),
        draft_id=_id(data, "draft_id"),
        attachments=files,
        drop_attachments=drop,
    )
