"""Email/get (RFC 8621 4.2) and Email/parse (4.9).

The properties a listing needs are columns of ``mta.emails``; the raw MIME is
read and parsed (policy.default) only when a property that needs it is asked
for: header forms, bodyStructure, textBody/htmlBody/attachments, bodyValues,
sender and replyTo.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from common.db import Conn
from mta.jmap.email import mime
from mta.jmap.email.blobs import read_blob
from mta.jmap.email.context import EmailContext, valid_ids
from mta.jmap.email.errors import MethodError
from mta.store import changes, emails
from mta.store.emails import Email

DEFAULT_PROPERTIES = (
    "id", "blobId", "threadId", "mailboxIds", "keywords", "size", "receivedAt", "messageId",
    "inReplyTo", "references", "sender", "from", "to", "cc", "bcc", "replyTo", "subject",
    "sentAt", "hasAttachment", "preview", "bodyValues", "textBody", "htmlBody", "attachments",
)  # fmt: skip
METADATA = ("id", "blobId", "threadId", "mailboxIds", "keywords", "size", "receivedAt")
CONVENIENCE = (
    "messageId", "inReplyTo", "references", "sender", "from", "to", "cc", "bcc", "replyTo",
    "subject", "sentAt",
)  # fmt: skip
BODY = (
    "bodyStructure",
    "bodyValues",
    "textBody",
    "htmlBody",
    "attachments",
    "hasAttachment",
    "preview",
)
PROPERTIES = {*METADATA, *CONVENIENCE, *BODY, "headers"}
# Served by columns of mta.emails: a request for these alone never reads MIME.
FROM_COLUMNS = {
    *METADATA, "messageId", "inReplyTo", "references", "from", "to", "cc", "bcc", "subject",
    "sentAt", "hasAttachment", "preview",
}  # fmt: skip
PARSE_DEFAULT_PROPERTIES = (
    "messageId", "inReplyTo", "references", "sender", "from", "to", "cc", "bcc", "replyTo",
    "subject", "sentAt", "hasAttachment", "preview", "bodyValues", "textBody", "htmlBody",
    "attachments",
)  # fmt: skip
# The convenience properties are these header forms (RFC 8621 4.1.3).
_CONVENIENCE_FORMS = {
    "messageId": "header:Message-ID:asMessageIds",
    "inReplyTo": "header:In-Reply-To:asMessageIds",
    "references": "header:References:asMessageIds",
    "sender": "header:Sender:asAddresses",
    "from": "header:From:asAddresses",
    "to": "header:To:asAddresses",
    "cc": "header:Cc:asAddresses",
    "bcc": "header:Bcc:asAddresses",
    "replyTo": "header:Reply-To:asAddresses",
    "subject": "header:Subject:asText",
    "sentAt": "header:Date:asDate",
}


async def load_rows(
    conn: Conn, address_id: str, ids: Sequence[str] | None, *, with_raw: bool, limit: int = 0
) -> list[Email]:
    return await emails.load(conn, address_id, ids, with_raw=with_raw, limit=limit)


def _addresses(value: list[dict[str, str]]) -> list[dict[str, Any]] | None:
    return [{"name": a.get("name") or None, "email": a.get("email", "")} for a in value] or None


def _date(value: datetime | None) -> str | None:
    return None if value is None else mime.utc_date(value)


def _from_columns(row: Email, prop: str) -> Any:
    match prop:
        case "id":
            return row.id
        case "blobId":
            return row.blob_id
        case "threadId":
            return row.thread_id
        case "mailboxIds":
            return {m: True for m in row.mailbox_ids}
        case "keywords":
            return {k: True for k in row.keywords}
        case "size":
            return row.size
        case "receivedAt":
            return _date(row.received_at)
        case "messageId":
            return [row.message_id] if row.message_id else None
        case "inReplyTo":
            return list(row.in_reply_to) or None
        case "references":
            return list(row.references) or None
        case "from":
            return _addresses(row.from_addrs)
        case "to":
            return _addresses(row.to_addrs)
        case "cc":
            return _addresses(row.cc_addrs)
        case "bcc":
            return _addresses(row.bcc_addrs)
        case "subject":
            return row.subject or None
        case "sentAt":
            return _date(row.sent_at)
        case "hasAttachment":
            return row.has_attachment
        case "preview":
            return row.preview
    raise KeyError(prop)


class Options:
    """The body arguments of Email/get and Email/parse, checked."""

    def __init__(self, args: Mapping[str, Any], default: Sequence[str]) -> None:
        props = args.get("properties")
        if props is None:
            props = list(default)
        if not isinstance(props, list) or not all(isinstance(p, str) for p in props):
            raise MethodError("invalidArguments", "properties must be a list of strings")
        self.header_props = {p: mime.header_property(p) for p in props if p.startswith("header:")}
        unknown = [p for p in props if p not in PROPERTIES and p not in self.header_props]
        if unknown:
            raise MethodError("invalidArguments", f"unknown properties: {', '.join(unknown)}")
        self.properties: list[str] = list(dict.fromkeys(props))
        body_props = args.get("bodyProperties")
        if body_props is None:
            body_props = list(mime.DEFAULT_BODY_PROPERTIES)
        if not isinstance(body_props, list) or not all(
            isinstance(p, str) and (p in mime.BODY_PROPERTIES or p.startswith("header:"))
            for p in body_props
        ):
            raise MethodError("invalidArguments", "bad bodyProperties")
        for p in body_props:
            if p.startswith("header:"):
                mime.header_property(p)
        self.body_properties: list[str] = body_props
        self.fetch_text = bool(args.get("fetchTextBodyValues", False))
        self.fetch_html = bool(args.get("fetchHTMLBodyValues", False))
        self.fetch_all = bool(args.get("fetchAllBodyValues", False))
        max_bytes = args.get("maxBodyValueBytes", 0)
        if not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 0:
            raise MethodError("invalidArguments", "maxBodyValueBytes must be an UnsignedInt")
        self.max_bytes = max_bytes

    @property
    def needs_mime(self) -> bool:
        return bool(self.header_props) or any(p not in FROM_COLUMNS for p in self.properties)


def from_message(
    msg: Any, blob_id: str | None, options: Options, props: Sequence[str]
) -> dict[str, Any]:
    """The asked properties that come from the MIME of ``msg``."""
    out: dict[str, Any] = {}
    root: mime.Part | None = None
    lists: tuple[list[mime.Part], list[mime.Part], list[mime.Part]] | None = None

    def get_root() -> mime.Part:
        nonlocal root
        if root is None:
            root = mime.structure(msg)
        return root

    def get_lists() -> tuple[list[mime.Part], list[mime.Part], list[mime.Part]]:
        nonlocal lists
        if lists is None:
            lists = mime.body_lists(get_root())
        return lists

    for prop in props:
        if prop in _CONVENIENCE_FORMS:
            out[prop] = mime.header_value(msg, mime.header_property(_CONVENIENCE_FORMS[prop]))
        elif prop == "headers":
            out[prop] = mime.raw_headers(msg)
        elif prop in options.header_props:
            out[prop] = mime.header_value(msg, options.header_props[prop])
        elif prop == "bodyStructure":
            out[prop] = mime.body_part(get_root(), blob_id, [*options.body_properties, "subParts"])
        elif prop in ("textBody", "htmlBody", "attachments"):
            chosen = get_lists()[("textBody", "htmlBody", "attachments").index(prop)]
            out[prop] = [mime.body_part(p, blob_id, options.body_properties) for p in chosen]
        elif prop == "hasAttachment":
            out[prop] = bool(get_lists()[2])
        elif prop == "preview":
            out[prop] = mime.preview_of(get_lists()[0])
        elif prop == "bodyValues":
            text, html, _ = get_lists()
            wanted: list[mime.Part] = []
            if options.fetch_all:
                wanted = [p for p in mime.leaves(get_root()) if p.type.startswith("text/")]
            else:
                if options.fetch_text:
                    wanted += text
                if options.fetch_html:
                    wanted += html
            out[prop] = {
                p.part_id: mime.body_value(p, options.max_bytes)
                for p in wanted
                if p.part_id and p.type.startswith("text/")
            }
    return out


async def get(
    ctx: EmailContext, conn: Conn, account_id: str, args: Mapping[str, Any]
) -> dict[str, Any]:
    options = Options(args, DEFAULT_PROPERTIES)
    raw_ids = args.get("ids")
    if raw_ids is not None:
        if len(raw_ids) > ctx.max_objects_in_get:
            raise MethodError("requestTooLarge", f"at most {ctx.max_objects_in_get} ids")
        ids: list[str] | None = valid_ids(raw_ids)
    else:
        ids = None
    state = await changes.state(conn, account_id, "Email")
    rows = await load_rows(
        conn, account_id, ids, with_raw=options.needs_mime, limit=ctx.max_objects_in_get + 1
    )
    if ids is None and len(rows) > ctx.max_objects_in_get:
        raise MethodError(
            "requestTooLarge", f"more than {ctx.max_objects_in_get} emails; ask by ids"
        )
    by_id = {r.id: r for r in rows}
    wanted = list(dict.fromkeys(raw_ids)) if raw_ids is not None else [r.id for r in rows]
    found: list[dict[str, Any]] = []
    not_found: list[str] = []
    props = options.properties if "id" in options.properties else ["id", *options.properties]
    for email_id in wanted:
        row = by_id.get(email_id)
        if row is None:
            not_found.append(email_id)
            continue
        item = {p: _from_columns(row, p) for p in props if p in FROM_COLUMNS}
        rest = [p for p in props if p not in item]
        if rest:
            raw = row.raw
            data = bytes(raw) if raw is not None else await ctx.raw.get(row.blob_id)
            item.update(from_message(mime.parse_raw(data), row.blob_id, options, rest))
        found.append({p: item[p] for p in props})
    return {"accountId": account_id, "state": state, "list": found, "notFound": not_found}


async def parse(
    ctx: EmailContext, conn: Conn, account_id: str, args: Mapping[str, Any]
) -> dict[str, Any]:
    """Email/parse: uploaded (or stored) message blobs as Email objects, nothing stored."""
    options = Options(args, PARSE_DEFAULT_PROPERTIES)
    blob_ids = args.get("blobIds")
    if not isinstance(blob_ids, list) or not all(isinstance(b, str) for b in blob_ids):
        raise MethodError("invalidArguments", "blobIds must be a list of strings")
    if len(blob_ids) > ctx.max_objects_in_get:
        raise MethodError("requestTooLarge", f"at most {ctx.max_objects_in_get} blobIds")
    parsed: dict[str, Any] = {}
    not_parsable: list[str] = []
    not_found: list[str] = []
    for blob_id in dict.fromkeys(blob_ids):
        data = await read_blob(ctx, conn, account_id, blob_id)
        if data is None:
            not_found.append(blob_id)
            continue
        try:
            msg = mime.parse_raw(data)
            if not msg.keys():
                raise ValueError("no header fields")
            item: dict[str, Any] = {p: None for p in options.properties}
            item.update(
                {"blobId": blob_id, "size": len(data)} if "blobId" in item or "size" in item else {}
            )
            mime_props = [p for p in options.properties if p not in METADATA]
            item.update(from_message(msg, blob_id, options, mime_props))
            for p in ("id", "threadId", "mailboxIds", "keywords", "receivedAt"):
                if p in item:
                    item[p] = None
            parsed[blob_id] = {p: item[p] for p in options.properties}
        except Exception:
            not_parsable.append(blob_id)
    return {
        "accountId": account_id,
        "parsed": parsed or None,
        "notParsable": not_parsable or None,
        "notFound": not_found or None,
    }
