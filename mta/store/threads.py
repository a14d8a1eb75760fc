"""Threads (JMAP Thread, RFC 8621 3): a message joins the oldest thread any of its ids names.

The only module that writes ``mta.threads`` and ``mta.thread_refs``; storing
an email resolves its thread in the same statement with :data:`THREAD_CTES`
(mta/store/emails.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from common.db import Conn, fetch_all, fetch_one
from mta.store import changes

# Find (oldest wins) or make the thread of a message from its ids, record the ids,
# log the change: common table expressions ending in ``thread(id, created)``, shared
# by thread_for and emails.insert (which resolves the thread in the same statement).
THREAD_CTES = f"""
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
            {changes.INSERT}
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


async def email_ids(conn: Conn, address_id: str, thread_ids: list[str]) -> dict[str, list[str]]:
    """Each thread's email ids, oldest first (RFC 8621 3: by receivedAt), by emails_thread."""
    rows = await fetch_all(
        conn,
        """
        SELECT e.thread_id::text AS thread_id,
               array_agg(e.id::text ORDER BY e.received_at, e.id) AS email_ids
          FROM mta.emails e
         WHERE e.thread_id = ANY(%s::uuid[]) AND e.address_id = %s
         GROUP BY e.thread_id
        """,
        (thread_ids, address_id),
    )
    return {r["thread_id"]: r["email_ids"] for r in rows}


async def drop_emptied(conn: Conn, thread_ids: list[str]) -> set[str]:
    """Delete those of ``thread_ids`` no email is in any more (their ids go by cascade);
    the ids deleted. The caller logs the changes."""
    rows = await fetch_all(
        conn,
        """
        DELETE FROM mta.threads t
         WHERE t.id = ANY(%s::uuid[])
           AND NOT EXISTS (SELECT 1 FROM mta.emails e WHERE e.thread_id = t.id)
        RETURNING t.id::text
        """,
        (thread_ids,),
    )
    return {r["id"] for r in rows}
