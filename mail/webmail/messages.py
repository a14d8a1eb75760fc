"""Webmail's messages and folders: the JMAP Email functions behind HTTP routes.

Every read and write goes through the functions JMAP serves (mta/jmap/email,
reached through mta/mailstore.py): the same queries, the same transactions,
the same change log, so a JMAP client and the webmail always agree and a
change made by one reaches the other's push. This module only translates:
the webmail's list parameters into an Email/query filter, id lists into
Email/set patches, a compose form into a message for Email/import.

A list of ids naming any message the mailbox does not have answers 404 and
changes nothing: the ids are checked with Email/get before the Email/set.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.parser import BytesParser
from typing import Any
from urllib.parse import urlencode

from common.crypto import constant_time_equals, derive_key, hmac_sha256_hex
from mail.context import MailContext
from mail.errors import MailError, conflict, not_found, quota_exceeded, validation_error
from mail.sending import mime as sending_mime
from mail.sending.fields import Attachment, Draft, Mailbox, mailboxes
from mail.web.lists import ListParams, Sorts
from mail.webmail.sanitize import sanitise
from mail.webmail.store import WebmailSession
from mta import mailstore
from mta.mailstore import EmailContext, Folder, MethodError

# Public sort names -> Email/query sort properties (the spec: unknown sorts are ignored).
SORTS = Sorts(
    columns={"received_at": "receivedAt", "sent_at": "sentAt", "subject": "subject",
             "from": "from", "size": "size"},
    default="received_at",
)  # fmt: skip
LIST_PROPERTIES = [
    "id", "threadId", "mailboxIds", "keywords", "size", "receivedAt", "sentAt", "from", "to",
    "cc", "subject", "preview", "hasAttachment",
]  # fmt: skip
READ_PROPERTIES = [
    *LIST_PROPERTIES, "blobId", "bcc", "replyTo", "messageId", "inReplyTo", "references",
    "textBody", "htmlBody", "attachments", "bodyValues",
]  # fmt: skip
BODY_PROPERTIES = ["partId", "blobId", "size", "name", "type", "charset", "disposition", "cid"]
FLAGS = {"seen": "$seen", "flagged": "$flagged", "answered": "$answered"}
MAX_IDS = 500
# A cid: image URL works this long without a cookie (the sandboxed frame sends none).
PART_URL_SECONDS = 15 * 60
MAX_BODY_CHARS = 2_000_000


def email_ctx(ctx: MailContext, uploads: Mapping[str, bytes] | None = None) -> EmailContext:
    async def reader(_address_id: str, blob_id: str) -> bytes | None:
        return (uploads or {}).get(blob_id)

    return mailstore.email_context(ctx.runtime, reader if uploads else None)


async def _call(ctx: MailContext, fn: Any, address_id: str, args: dict[str, Any], **kw: Any) -> Any:
    ectx = kw.pop("ectx", None) or email_ctx(ctx)
    try:
        async with ctx.db.connection() as conn:
            return await fn(ectx, conn, address_id, {"accountId": address_id, **args}, **kw)
    except MethodError as exc:
        raise validation_error(str(getattr(exc, "description", None) or exc)) from None


# --- folders ---------------------------------------------------------------


async def folders(ctx: MailContext, session: WebmailSession) -> list[Folder]:
    async with ctx.db.connection() as conn:
        return await mailstore.folders(conn, session.address_id, ctx.clock.now())


async def create_folder(ctx: MailContext, session: WebmailSession, name: str) -> Folder:
    now = ctx.clock.now()
    async with ctx.db.transaction() as conn:
        try:
            if await mailstore.find_folder(conn, session.address_id, name) is not None:
                raise conflict("a folder with this name exists")
            folder_id = await mailstore.create_folder(conn, session.address_id, name, now)
        except ValueError as exc:
            raise validation_error(str(exc)) from None
        found = await mailstore.folders(conn, session.address_id, now)
    return next(f for f in found if str(f.id) == folder_id)


async def delete_folder(ctx: MailContext, session: WebmailSession, folder_id: str) -> None:
    async with ctx.db.transaction() as conn:
        outcome = await mailstore.delete_folder(
            conn, session.address_id, folder_id, ctx.clock.now()
        )
    if outcome == "missing":
        raise not_found("folder")
    if outcome == "special":
        raise conflict("special folders (Inbox, Drafts, Sent, Archive, Junk, Trash) stay")
    if outcome == "has_children":
        raise conflict("delete the folders inside it first")
    if outcome == "not_empty":
        raise conflict("the folder is not empty: move or delete its messages first")


async def _roles(ctx: MailContext, address_id: str) -> dict[str, str]:
    async with ctx.db.transaction() as conn:
        return await mailstore.default_folders(conn, address_id, ctx.clock.now())


async def _owned_folder(ctx: MailContext, address_id: str, folder_id: str) -> None:
    found = await folders_by_id(ctx, address_id)
    if folder_id not in found:
        raise not_found("folder")


async def folders_by_id(ctx: MailContext, address_id: str) -> dict[str, Folder]:
    async with ctx.db.connection() as conn:
        rows = await mailstore.folders(conn, address_id, ctx.clock.now())
    return {str(f.id): f for f in rows}


# --- listing ---------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    """The message list's filters (docs/mail.md, "Webmail"), besides ``search``."""

    folder_id: str | None = None
    unread: bool | None = None
    flagged: bool | None = None
    has_attachment: bool | None = None
    sender: str | None = None
    recipient: str | None = None
    since: datetime | None = None
    before: datetime | None = None


def _condition(params: ListParams, filters: Filters, inbox: str | None) -> dict[str, Any]:
    conds: list[dict[str, Any]] = []
    folder = filters.folder_id or (None if params.search else inbox)
    if folder:
        conds.append({"inMailbox": folder})
    if params.search:
        conds.append({"text": params.search})
    if filters.unread is not None:
        conds.append({"notKeyword" if filters.unread else "hasKeyword": "$seen"})
    if filters.flagged is not None:
        conds.append({"hasKeyword" if filters.flagged else "notKeyword": "$flagged"})
    if filters.has_attachment is not None:
        conds.append({"hasAttachment": filters.has_attachment})
    if filters.sender:
        conds.append({"from": filters.sender})
    if filters.recipient:
        conds.append({"to": filters.recipient})
    if filters.since:
        conds.append({"after": _utc(filters.since)})
    if filters.before:
        conds.append({"before": _utc(filters.before)})
    if len(conds) == 1:
        return conds[0]
    return {"operator": "AND", "conditions": conds}


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def list_messages(
    ctx: MailContext, session: WebmailSession, params: ListParams, filters: Filters
) -> tuple[list[dict[str, Any]], int]:
    """One page of messages (Email/query, then Email/get of the page's ids)."""
    address_id = session.address_id
    if filters.folder_id:
        await _owned_folder(ctx, address_id, filters.folder_id)
    inbox = None if filters.folder_id else (await _roles(ctx, address_id)).get("inbox")
    sort = [{"property": SORTS.columns[params.sort], "isAscending": params.direction == "asc"}]
    if params.sort != "received_at":
        sort.append({"property": "receivedAt", "isAscending": False})
    found = await _call(
        ctx,
        mailstore.email_query,
        address_id,
        {
            "filter": _condition(params, filters, inbox),
            "sort": sort,
            "position": params.offset,
            "limit": params.limit,
            "calculateTotal": True,
        },
    )
    ids = found["ids"]
    if not ids:
        return [], int(found.get("total") or 0)
    got = await _call(
        ctx, mailstore.email_get, address_id, {"ids": ids, "properties": LIST_PROPERTIES}
    )
    by_id = {e["id"]: e for e in got["list"]}
    return [by_id[i] for i in ids if i in by_id], int(found["total"])


# --- reading ---------------------------------------------------------------


def _part_key(ctx: MailContext) -> bytes:
    return derive_key(ctx.settings.secret, "mail.webmail.part")


def _part_signature(
    ctx: MailContext, address_id: str, email_id: str, section: str, exp: int
) -> str:
    return hmac_sha256_hex(_part_key(ctx), f"{address_id}|{email_id}|{section}|{exp}")


def part_url(ctx: MailContext, address_id: str, email_id: str, section: str) -> str:
    """A URL of one part that works without a cookie for PART_URL_SECONDS."""
    exp = int(ctx.clock.now().timestamp()) + PART_URL_SECONDS
    sig = _part_signature(ctx, address_id, email_id, section, exp)
    query = urlencode({"mailbox": address_id, "expires": exp, "signature": sig})
    return f"/api/mail/messages/{email_id}/part/{section}?{query}"


def signed_mailbox(
    ctx: MailContext, email_id: str, section: str, query: Mapping[str, str]
) -> str | None:
    """The address a signed part URL was made for, when its signature holds and is fresh."""
    address_id, sig = query.get("mailbox", ""), query.get("signature", "")
    try:
        exp = int(query.get("expires", ""))
    except ValueError:
        return None
    if not address_id or not sig or exp < ctx.clock.now().timestamp():
        return None
    expected = _part_signature(ctx, address_id, email_id, section, exp)
    return address_id if constant_time_equals(expected, sig) else None


@dataclass(frozen=True)
class Message:
    email: dict[str, Any]
    html: str | None
    text: str | None
    blocked_remote: int
    attachments: list[dict[str, Any]]


async def _get_one(
    ctx: MailContext, address_id: str, email_id: str, properties: Sequence[str], **extra: Any
) -> dict[str, Any]:
    got = await _call(
        ctx,
        mailstore.email_get,
        address_id,
        {"ids": [email_id], "properties": list(properties), **extra},
    )
    if not got["list"]:
        raise not_found("message")
    return dict(got["list"][0])


async def read(
    ctx: MailContext, session: WebmailSession, email_id: str, *, allow_remote: bool
) -> Message:
    address_id = session.address_id
    email = await _get_one(
        ctx,
        address_id,
        email_id,
        READ_PROPERTIES,
        fetchHTMLBodyValues=True,
        fetchTextBodyValues=True,
        bodyProperties=BODY_PROPERTIES,
        maxBodyValueBytes=MAX_BODY_CHARS,
    )
    values = email.pop("bodyValues") or {}
    html_parts = [p for p in email.pop("htmlBody") or [] if p.get("type") == "text/html"]
    text_parts = [
        p for p in email.pop("textBody") or [] if str(p.get("type", "")).startswith("text/")
    ]
    attachments = email.pop("attachments") or []
    cids = {str(p["cid"]).strip("<>"): p["partId"] for p in attachments if p.get("cid")}

    def cid_url(content_id: str) -> str | None:
        section = cids.get(content_id)
        return None if section is None else part_url(ctx, address_id, email_id, section)

    html = text = None
    blocked = 0
    if html_parts:
        joined = "".join(values.get(p["partId"], {}).get("value", "") for p in html_parts)
        cleaned = sanitise(joined, cid_url, allow_remote=allow_remote)
        html, blocked = cleaned.html, cleaned.blocked_remote
    if text_parts:
        text = "\n".join(values.get(p["partId"], {}).get("value", "") for p in text_parts)
    listed = [
        {**p, "url": f"/api/mail/messages/{email_id}/part/{p['partId']}"}
        for p in attachments
        if p.get("partId")
    ]
    return Message(email, html, text, blocked, listed)


@dataclass(frozen=True)
class Part:
    content: bytes
    media_type: str
    filename: str | None


async def part(ctx: MailContext, address_id: str, email_id: str, section: str) -> Part:
    """One MIME part by its partId, decoded; 404 for another mailbox's message."""
    email = await _get_one(
        ctx,
        address_id,
        email_id,
        ["blobId", "bodyStructure"],
        bodyProperties=["partId", "name", "type", "subParts"],
    )
    name = _part_name(email.get("bodyStructure"), section)
    async with ctx.db.connection() as conn:
        found = await mailstore.read_message_part(
            email_ctx(ctx), conn, address_id, f"{email['blobId']}.{section}"
        )
    if found is None or name is False:
        raise not_found("part")
    content, media_type = found
    return Part(content, media_type, name if isinstance(name, str) and name else None)


def _part_name(node: Any, section: str) -> str | bool | None:
    """The part's file name (None without one), or False when no part has this id."""
    if not isinstance(node, dict):
        return False
    if node.get("partId") == section:
        return node.get("name")
    for child in node.get("subParts") or []:
        found = _part_name(child, section)
        if found is not False:
            return found
    return False


async def raw(ctx: MailContext, session: WebmailSession, email_id: str) -> bytes:
    email = await _get_one(ctx, session.address_id, email_id, ["blobId"])
    async with ctx.db.connection() as conn:
        data = await mailstore.read_message_blob(
            email_ctx(ctx), conn, session.address_id, email["blobId"]
        )
    if data is None:
        raise not_found("message")
    return data


# --- changing --------------------------------------------------------------


def check_ids(value: object) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(i, str) for i in value):
        raise validation_error("ids must be a non-empty array of message ids")
    if len(value) > MAX_IDS:
        raise validation_error(f"at most {MAX_IDS} ids at once")
    return list(dict.fromkeys(value))


async def _owned_emails(ctx: MailContext, address_id: str, ids: list[str]) -> list[dict[str, Any]]:
    """The messages, or 404 when any id is not one of this mailbox's (nothing changes)."""
    got = await _call(
        ctx, mailstore.email_get, address_id, {"ids": ids, "properties": ["id", "mailboxIds"]}
    )
    if got["notFound"]:
        raise not_found("message")
    return list(got["list"])


async def _set(ctx: MailContext, address_id: str, args: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = await _call(ctx, mailstore.email_set, address_id, args)
    failed = result.get("notUpdated") or result.get("notDestroyed") or result.get("notCreated")
    if failed:
        # Only a race with another client gets here (the ids were checked first).
        raise not_found("message")
    return result


async def set_flags(
    ctx: MailContext, session: WebmailSession, ids: list[str], flags: Mapping[str, bool]
) -> None:
    await _owned_emails(ctx, session.address_id, ids)
    patch = {f"keywords/{FLAGS[name]}": (True if on else None) for name, on in flags.items()}
    await _set(ctx, session.address_id, {"update": {i: patch for i in ids}})


async def move(ctx: MailContext, session: WebmailSession, ids: list[str], folder_id: str) -> None:
    await _owned_folder(ctx, session.address_id, folder_id)
    await _owned_emails(ctx, session.address_id, ids)
    await _set(
        ctx, session.address_id, {"update": {i: {"mailboxIds": {folder_id: True}} for i in ids}}
    )


async def delete(
    ctx: MailContext, session: WebmailSession, ids: list[str]
) -> tuple[list[str], list[str]]:
    """Move to Trash; what is already (only) in Trash is deleted for good."""
    emails = await _owned_emails(ctx, session.address_id, ids)
    trash = (await _roles(ctx, session.address_id))["trash"]
    for_good = [e["id"] for e in emails if set(e["mailboxIds"]) <= {trash}]
    to_trash = [e["id"] for e in emails if e["id"] not in for_good]
    args: dict[str, Any] = {"destroy": for_good}
    if to_trash:
        args["update"] = {i: {"mailboxIds": {trash: True}} for i in to_trash}
    await _set(ctx, session.address_id, args)
    return to_trash, for_good


# --- composing -------------------------------------------------------------


@dataclass
class Compose:
    """A message being written: the fields of a send or draft body, checked."""

    to: list[Mailbox] = field(default_factory=list)
    cc: list[Mailbox] = field(default_factory=list)
    bcc: list[Mailbox] = field(default_factory=list)
    subject: str = ""
    text: str | None = None
    html: str | None = None
    # The message this one answers (its id in this mailbox) or forwards.
    reply_to_id: str | None = None
    forward_id: str | None = None
    draft_id: str | None = None
    attachments: list[Attachment] = field(default_factory=list)
    # Sections of the draft's (or forwarded message's) attachments to leave out.
    drop_attachments: list[str] = field(default_factory=list)


def _sender(session: WebmailSession) -> Mailbox:
    return Mailbox(session.display_name, session.email)


async def _thread_headers(
    ctx: MailContext, session: WebmailSession, compose: Compose
) -> dict[str, str]:
    if not compose.reply_to_id:
        return {}
    original = await _get_one(
        ctx, session.address_id, compose.reply_to_id, ["messageId", "references"]
    )
    mids = original.get("messageId") or []
    if not mids:
        return {}
    refs = [*(original.get("references") or []), mids[0]]
    return {"In-Reply-To": f"<{mids[0]}>", "References": " ".join(f"<{r}>" for r in refs[-20:])}


async def _carried_attachments(
    ctx: MailContext, session: WebmailSession, source_id: str, drop: list[str]
) -> list[Attachment]:
    """The attachments of a draft being updated or sent, or of a forwarded message."""
    email = await _get_one(
        ctx, session.address_id, source_id, ["attachments"], bodyProperties=BODY_PROPERTIES
    )
    out = []
    for p in email.get("attachments") or []:
        if not p.get("partId") or p["partId"] in drop:
            continue
        found = await part(ctx, session.address_id, source_id, p["partId"])
        cid = str(p["cid"]).strip("<>") if p.get("cid") else None
        out.append(Attachment(p.get("name") or "attachment", found.media_type, found.content, cid))
    return out


async def _build(
    ctx: MailContext, session: WebmailSession, compose: Compose, *, with_bcc: bool
) -> tuple[str, Draft, bytes]:
    headers = await _thread_headers(ctx, session, compose)
    if with_bcc and compose.bcc:
        headers["Bcc"] = ", ".join(str(b) for b in compose.bcc)
    carried: list[Attachment] = []
    source = compose.draft_id or compose.forward_id
    if source:
        carried = await _carried_attachments(ctx, session, source, compose.drop_attachments)
    draft = Draft(
        sender=_sender(session),
        to=compose.to,
        cc=compose.cc,
        bcc=compose.bcc,
        subject=compose.subject,
        text=compose.text if compose.text is not None or compose.html is not None else "",
        html=compose.html,
        headers=headers,
        attachments=[*carried, *compose.attachments],
    )
    email_id = str(uuid.uuid4())
    return email_id, draft, sending_mime.build(email_id, draft, ctx.clock.now())


async def _store(
    ctx: MailContext, address_id: str, data: bytes, folder_id: str, keywords: list[str]
) -> str:
    blob = f"webmail-{uuid.uuid4()}"
    result = await _call(
        ctx,
        mailstore.email_import,
        address_id,
        {
            "emails": {
                "m": {
                    "blobId": blob,
                    "mailboxIds": {folder_id: True},
                    "keywords": {k: True for k in keywords},
                }
            }
        },
        ectx=email_ctx(ctx, {blob: data}),
    )
    if not result.get("created"):
        raise validation_error("the message could not be stored")
    return str(result["created"]["m"]["id"])


async def save_draft(ctx: MailContext, session: WebmailSession, compose: Compose) -> str:
    """Store the draft in Drafts; given ``draft_id``, it replaces that draft. Its new id."""
    if compose.draft_id:
        await _owned_emails(ctx, session.address_id, [compose.draft_id])
    _, _, data = await _build(ctx, session, compose, with_bcc=True)
    drafts = (await _roles(ctx, session.address_id))["drafts"]
    new_id = await _store(ctx, session.address_id, data, drafts, ["$draft", "$seen"])
    if compose.draft_id:
        await _set(ctx, session.address_id, {"destroy": [compose.draft_id]})
    return new_id


async def load_draft(ctx: MailContext, session: WebmailSession, compose: Compose) -> Compose:
    """A send naming only a draft: the draft's fields, with the body's on top."""
    data = await raw(ctx, session, compose.draft_id or "")
    msg = BytesParser(policy=policy.default).parsebytes(data)

    def boxes(name: str) -> list[Mailbox]:
        values = [str(a) for h in msg.get_all(name, []) for a in h.addresses]
        return mailboxes(values, name.lower(), limit=100) if values else []

    body = msg.get_body(("plain",))
    html = msg.get_body(("html",))
    in_reply = str(msg.get("In-Reply-To", "") or "")
    return Compose(
        to=compose.to or boxes("To"),
        cc=compose.cc or boxes("Cc"),
        bcc=compose.bcc or boxes("Bcc"),
        subject=compose.subject or str(msg.get("Subject", "") or ""),
        text=compose.text if compose.text is not None else (body.get_content() if body else None),
        html=compose.html if compose.html is not None else (html.get_content() if html else None),
        reply_to_id=compose.reply_to_id or await _email_by_message_id(ctx, session, in_reply),
        draft_id=compose.draft_id,
        attachments=compose.attachments,
        drop_attachments=compose.drop_attachments,
    )


async def _email_by_message_id(
    ctx: MailContext, session: WebmailSession, header: str
) -> str | None:
    mid = re.sub(r"[<>\s]", "", header)
    if not mid:
        return None
    found = await _call(
        ctx, mailstore.email_query, session.address_id,
        {"filter": {"header": ["Message-ID", f"<{mid}>"]}, "limit": 1},
    )  # fmt: skip
    return found["ids"][0] if found["ids"] else None


async def send(ctx: MailContext, session: WebmailSession, compose: Compose) -> str:
    """Queue the message for delivery, keep a copy in Sent; the Sent copy's id."""
    if compose.draft_id:
        await _owned_emails(ctx, session.address_id, [compose.draft_id])
        compose = await load_draft(ctx, session, compose)
    if not (compose.to or compose.cc or compose.bcc):
        raise MailError("missing_required_field", "Missing `to` field.")
    email_id, draft, data = await _build(ctx, session, compose, with_bcc=False)
    now = ctx.clock.now()
    # The queue first, in its own transaction: a failure after it leaves a sent
    # message without its Sent copy, never a Sent copy of mail that did not leave.
    async with ctx.db.transaction() as conn:
        # The plan's sends_per_month: one message is one send, counted by submit.
        try:
            await mailstore.submit(
                conn,
                mailstore.Submission(
                    message_id=email_id,
                    source="webmail",
                    mail_from=session.email,
                    recipients=draft.recipients,
                    raw=data,
                    account_id=session.account_id,
                    address_id=session.address_id,
                    sends=mailstore.Sends.COUNT,
                ),
                now=now,
                max_lifetime=ctx.config.outbound_max_lifetime,
            )
        except mailstore.SendRefused as exc:
            raise quota_exceeded(exc.message) from None
    sent = (await _roles(ctx, session.address_id))["sent"]
    copy_id = await _store(ctx, session.address_id, data, sent, ["$seen"])
    if compose.reply_to_id:
        await _set(
            ctx, session.address_id, {"update": {compose.reply_to_id: {"keywords/$answered": True}}}
        )
    if compose.forward_id:
        await _set(
            ctx, session.address_id, {"update": {compose.forward_id: {"keywords/$forwarded": True}}}
        )
    if compose.draft_id:
        await _set(ctx, session.address_id, {"destroy": [compose.draft_id]})
    return copy_id
