"""Emails (JMAP Email, RFC 8621 4): rows over blobs, threads, membership, keywords."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, Prepared, fetch_all, fetch_one
from mta.message import ParsedMessage
from mta.store import counters

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


# Find (oldest wins) or make the thread of a message from its ids, record the ids,
# log the change: common table expressions ending in ``thread(id, created)``, shared
# by thread_for and insert (which resolves the thread in the same statement).
THREAD_CTES = """
        found AS (
            SELECT r.thread_id AS id FROM mta.thread_refs r
              JOIN mta.threads t ON t.id = r.thread_id
             WHERE r.address_id = %(a)s AND r.message_id = ANY(%(keys)s)
             ORDER BY t.created_at, t.id LIMIT 1
        ), made AS (
            INSERT INTO mta.threads (address_id, created_at)
            SELECT %(a)s::uuid, %(now)s WHERE NOT EXISTS (SELECT 1 FROM found)
            RETURNING id
        ), thread AS (
            SELECT id, false AS created FROM found UNION ALL SELECT id, true FROM made
        ), refs AS (
            INSERT INTO mta.thread_refs (address_id, message_id, thread_id)
            SELECT %(a)s::uuid, k, (SELECT id FROM thread) FROM unnest(%(keys)s::text[]) AS k
            ON CONFLICT DO NOTHING
        ), thread_change AS (
            INSERT INTO mta.changes (address_id, type_name, object_id, change, created_at)
            SELECT %(a)s::uuid, 'Thread', id, CASE WHEN created THEN 'created' ELSE 'updated' END,
                   %(now)s
              FROM thread
        )
"""


async def thread_for(conn: Conn, address_id: str, keys: Sequence[str], now: datetime) -> str:
    """The thread of any message-id in ``keys`` (oldest thread wins), else a new one.

    Every key is then recorded for this thread, so a later reply that only
    references this message finds it. One statement: delivery is hot.
    """
    row = await fetch_one(
        conn,
        f"""
        WITH {THREAD_CTES}
        SELECT id FROM thread
        """,
        {"a": address_id, "keys": list(keys), "now": now},
    )
    assert row is not None
    return str(row["id"])


# The quota row, written with each email outside a delivery batch; inside one
# the batch writes its counts once, before COMMIT (mta/store/counters.py).
_USAGE_CTE = """
        ), usage AS (
            INSERT INTO mta.quota_usage (address_id, used_bytes, emails) VALUES (%(a)s, %(size)s, 1)
            ON CONFLICT (address_id) DO UPDATE
               SET used_bytes = mta.quota_usage.used_bytes + EXCLUDED.used_bytes,
                   emails = mta.quota_usage.emails + 1"""


def _insert_sql(usage: str) -> str:
    return f"""
        WITH {THREAD_CTES}, e AS (
            INSERT INTO mta.emails
                (address_id, blob_id, thread_id, size, received_at, keywords, message_id,
                 in_reply_to, "references", subject, from_addrs, to_addrs, cc_addrs, sent_at,
                 preview, has_attachment, envelope_from, bcc_addrs, body_search)
            VALUES (%(a)s, %(blob)s, (SELECT id FROM thread), %(size)s, %(received)s, %(keywords)s, %(mid)s,
                    %(irt)s, %(refs)s, %(subject)s, %(from)s, %(to)s, %(cc)s, %(sent)s,
                    %(preview)s, %(attach)s, %(env_from)s, %(bcc)s,
                    to_tsvector('simple', %(body)s))
            RETURNING id
        ), member AS (
            INSERT INTO mta.email_mailboxes (mailbox_id, email_id, received_at, seen, thread_id)
            SELECT m, (SELECT id FROM e), %(received)s, %(seen)s, (SELECT id FROM thread)
              FROM unnest(%(mailboxes)s::text[]::uuid[]) AS m{usage}
        ), change AS (
            INSERT INTO mta.changes (address_id, type_name, object_id, change, created_at)
            SELECT %(a)s::uuid, 'Email', id, 'created', %(now)s::timestamptz FROM e
            UNION ALL
            SELECT %(a)s::uuid, 'Mailbox', m, 'updated', %(now)s::timestamptz
              FROM unnest(%(mailboxes)s::text[]::uuid[]) AS m
        )
        SELECT id FROM e
        """


# Prepared: PostgreSQL spent as long planning this statement as running it
# (0.5 ms each), once for every message received.
_INSERT = Prepared(_insert_sql(_USAGE_CTE))
_INSERT_DEFERRED = Prepared(_insert_sql(""))


async def insert(conn: Conn, new: NewEmail, now: datetime) -> str:
    """Store one email in its mailboxes; the caller holds the transaction.

    The thread, the email row, its memberships (the triggers count them), the
    quota usage and the change log entries are written by one statement.
    """
    p = new.parsed
    keywords = sorted({k.lower() for k in new.keywords})
    deferred = counters.deferred_for(conn)
    mailbox_ids = sorted({str(m) for m in new.mailbox_ids})
    if deferred is not None:
        deferred.email_added(new.address_id, mailbox_ids, new.size, "$seen" in keywords)
    row = await (_INSERT if deferred is None else _INSERT_DEFERRED).fetch_one(
        conn,
        {
            "a": new.address_id,
            "blob": new.blob_id,
            "keys": list(p.thread_keys),
            "size": new.size,
            "received": new.received_at,
            "keywords": keywords,
            "mid": p.message_id,
            "irt": p.in_reply_to,
            "refs": p.references,
            "subject": p.subject,
            "from": Json(p.from_addrs),
            "to": Json(p.to_addrs),
            "cc": Json(p.cc_addrs),
            "sent": p.sent_at,
            "preview": p.preview,
            "attach": p.has_attachment,
            "env_from": new.envelope_from[:320],
            "bcc": Json(p.bcc_addrs),
            # Bcc names and addresses are searched with the body (RFC 8621 4.4.1 text).
            "body": " ".join([p.body_text, *(f"{a['name']} {a['email']}" for a in p.bcc_addrs)]),
            "seen": "$seen" in keywords,
            # As text[]: a prepared statement's uuid[] parameter takes no text array.
            "mailboxes": mailbox_ids,
            "now": now,
        },
    )
    assert row is not None
    return str(row["id"])


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
