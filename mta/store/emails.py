"""Emails (JMAP Email, RFC 8621 4): rows over blobs, threads, membership, keywords."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, fetch_all, fetch_val
from mta.message import ParsedMessage
from mta.store import changes, quota

SYSTEM_KEYWORDS = ("$seen", "$flagged", "$answered", "$draft", "$forwarded", "$junk")


@dataclass(frozen=True)
class NewEmail:
    address_id: str
    blob_id: str
    size: int
    received_at: datetime
    parsed: ParsedMessage
    mailbox_ids: Sequence[str]
    keywords: Sequence[str] = ()
    envelope_from: str = ""


async def thread_for(conn: Conn, address_id: str, keys: Sequence[str], now: datetime) -> str:
    """The thread of any message-id in ``keys`` (oldest thread wins), else a new one.

    Every key is then recorded for this thread, so a later reply that only
    references this message finds it.
    """
    thread_id = None
    if keys:
        thread_id = await fetch_val(
            conn,
            """
            SELECT r.thread_id FROM mta.thread_refs r JOIN mta.threads t ON t.id = r.thread_id
             WHERE r.address_id = %s AND r.message_id = ANY(%s)
             ORDER BY t.created_at, t.id LIMIT 1
            """,
            (address_id, list(keys)),
        )
    created = thread_id is None
    if created:
        thread_id = await fetch_val(
            conn,
            "INSERT INTO mta.threads (address_id, created_at) VALUES (%s, %s) RETURNING id",
            (address_id, now),
        )
    thread_id = str(thread_id)
    if keys:
        await fetch_all(
            conn,
            """
            INSERT INTO mta.thread_refs (address_id, message_id, thread_id)
            SELECT %s, unnest(%s::text[]), %s ON CONFLICT DO NOTHING RETURNING 1
            """,
            (address_id, list(keys), thread_id),
        )
    await changes.record(
        conn, address_id, "Thread", [thread_id], "created" if created else "updated", now
    )
    return thread_id


async def insert(conn: Conn, new: NewEmail, now: datetime) -> str:
    """Store one email in its mailboxes; the caller holds the transaction."""
    p = new.parsed
    thread_id = await thread_for(conn, new.address_id, p.thread_keys, now)
    keywords = sorted({k.lower() for k in new.keywords})
    email_id = str(
        await fetch_val(
            conn,
            """
            INSERT INTO mta.emails
                (address_id, blob_id, thread_id, size, received_at, keywords, message_id,
                 in_reply_to, "references", subject, from_addrs, to_addrs, cc_addrs, sent_at,
                 preview, has_attachment, envelope_from)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
            RETURNING id
            """,
            (
                new.address_id,
                new.blob_id,
                thread_id,
                new.size,
                new.received_at,
                keywords,
                p.message_id,
                p.in_reply_to,
                p.references,
                p.subject,
                Json(p.from_addrs),
                Json(p.to_addrs),
                Json(p.cc_addrs),
                p.sent_at,
                p.preview,
                p.has_attachment,
                new.envelope_from[:320],
            ),
        )
    )
    seen = "$seen" in keywords
    await fetch_all(
        conn,
        """
        INSERT INTO mta.email_mailboxes (mailbox_id, email_id, received_at, seen)
        SELECT unnest(%s::uuid[]), %s, %s, %s RETURNING 1
        """,
        (sorted(set(new.mailbox_ids)), email_id, new.received_at, seen),
    )
    await quota.add(conn, new.address_id, new.size)
    await changes.record(conn, new.address_id, "Email", [email_id], "created", now)
    await changes.record(conn, new.address_id, "Mailbox", list(new.mailbox_ids), "updated", now)
    return email_id


async def in_mailbox(
    conn: Conn, mailbox_id: str, *, limit: int, offset: int = 0
) -> list[dict[str, Any]]:
    """A folder's emails, newest first (served by email_mailboxes_listing)."""
    return await fetch_all(
        conn,
        """
        SELECT e.id, e.blob_id, e.thread_id, e.size, e.received_at, e.keywords, e.message_id,
               e.subject, e.from_addrs, e.to_addrs, e.preview, e.has_attachment
          FROM mta.email_mailboxes em JOIN mta.emails e ON e.id = em.email_id
         WHERE em.mailbox_id = %s
         ORDER BY em.received_at DESC, em.email_id DESC
         LIMIT %s OFFSET %s
        """,
        (mailbox_id, limit, offset),
    )


async def for_address(conn: Conn, address_id: str) -> list[dict[str, Any]]:
    """Every email of an address with its mailbox ids, newest first (tests, exports)."""
    return await fetch_all(
        conn,
        """
        SELECT e.id, e.blob_id, e.thread_id, e.size, e.received_at, e.keywords, e.message_id,
               e.subject, e.from_addrs, e.to_addrs, e.cc_addrs, e.preview, e.envelope_from,
               array(SELECT m.name FROM mta.email_mailboxes em
                       JOIN mta.mailboxes m ON m.id = em.mailbox_id
                      WHERE em.email_id = e.id ORDER BY m.name) AS folders
          FROM mta.emails e WHERE e.address_id = %s
         ORDER BY e.received_at DESC, e.id DESC
        """,
        (address_id,),
    )


async def search(
    conn: Conn, address_id: str, words: str, *, limit: int = 50
) -> list[dict[str, Any]]:
    """Header search (subject, from, to, cc) by words, newest first."""
    return await fetch_all(
        conn,
        """
        SELECT id, subject, from_addrs, received_at FROM mta.emails
         WHERE address_id = %s AND search @@ plainto_tsquery('simple', %s)
         ORDER BY received_at DESC, id DESC LIMIT %s
        """,
        (address_id, words, limit),
    )
