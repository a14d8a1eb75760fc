"""Webmail response shapes, each with its ``object``."""

from __future__ import annotations

from typing import Any

from mail.webmail.messages import Message
from mail.webmail.store import WebmailSession
from mta.mailstore import Folder

FLAG_KEYWORDS = {"$seen": "seen", "$flagged": "flagged", "$answered": "answered",
                 "$draft": "draft", "$forwarded": "forwarded"}  # fmt: skip


def me(session: WebmailSession) -> dict[str, Any]:
    return {
        "object": "mailbox",
        "id": session.address_id,
        "email": session.email,
        "name": session.display_name,
        "session_expires_at": session.expires_at,
    }


def folder(row: Folder) -> dict[str, Any]:
    return {
        "object": "folder",
        "id": str(row.id),
        "name": row.name,
        "parent_id": None if row.parent_id is None else str(row.parent_id),
        "role": row.role,
        "special": row.role is not None,
        "total": row.total_emails,
        "unread": row.unread_emails,
    }


def _flags(keywords: dict[str, bool] | None) -> list[str]:
    return sorted(FLAG_KEYWORDS[k] for k in keywords or {} if k in FLAG_KEYWORDS)


def summary(email: dict[str, Any]) -> dict[str, Any]:
    """One row of the message list (Email/get's list properties, snake_cased)."""
    return {
        "object": "message",
        "id": email["id"],
        "thread_id": email.get("threadId"),
        "folder_ids": sorted(email.get("mailboxIds") or {}),
        "flags": _flags(email.get("keywords")),
        "from": email.get("from") or [],
        "to": email.get("to") or [],
        "cc": email.get("cc") or [],
        "subject": email.get("subject") or "",
        "preview": email.get("preview") or "",
        "size": email.get("size"),
        "has_attachment": bool(email.get("hasAttachment")),
        "received_at": email.get("receivedAt"),
        "sent_at": email.get("sentAt"),
    }


def _attachment(part: dict[str, Any]) -> dict[str, Any]:
    return {
        "object": "attachment",
        "section": part["partId"],
        "name": part.get("name"),
        "type": part.get("type"),
        "size": part.get("size"),
        "disposition": part.get("disposition"),
        "cid": part.get("cid"),
        "url": part["url"],
    }


def message(found: Message) -> dict[str, Any]:
    email = found.email
    return {
        **summary(email),
        "bcc": email.get("bcc") or [],
        "reply_to": email.get("replyTo") or [],
        "message_id": (email.get("messageId") or [None])[0],
        "in_reply_to": email.get("inReplyTo") or [],
        "references": email.get("references") or [],
        # Sanitised on the server (mail/webmail/sanitize.py); None when the message has no HTML.
        "html": found.html,
        "text": found.text,
        "remote_content_blocked": found.blocked_remote,
        "attachments": [_attachment(p) for p in found.attachments],
    }
