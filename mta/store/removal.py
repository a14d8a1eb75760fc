"""Destroying emails: rows, memberships (counts by trigger), quota, threads, change log."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from common.db import Conn, fetch_all


async def destroy_emails(
    conn: Conn, address_id: str, email_ids: Sequence[str], now: datetime
) -> list[str]:
    """Delete the address's emails among ``email_ids``; the ids actually destroyed.

    The caller holds the transaction. Membership rows go with the emails (their
    trigger keeps the mailbox counts), the quota usage shrinks, the blob ids
    become collection candidates (trigger), and the change log hears of every
    Email destroyed, Mailbox whose counts moved and Thread that lost a message
    (destroyed when it has none left).
    """
    if not email_ids:
        return []
    rows = await fetch_all(
        conn,
        """
        WITH members AS (
            SELECT DISTINCT em.mailbox_id FROM mta.email_mailboxes em
              JOIN mta.emails e ON e.id = em.email_id
             WHERE e.address_id = %(a)s AND e.id = ANY(%(ids)s::uuid[])
        ), gone AS (
            DELETE FROM mta.emails WHERE address_id = %(a)s AND id = ANY(%(ids)s::uuid[])
            RETURNING id, thread_id, size
        ), usage AS (
            UPDATE mta.quota_usage
               SET used_bytes = greatest(0, used_bytes - (SELECT coalesce(sum(size), 0) FROM gone)),
                   emails = greatest(0, emails - (SELECT count(*) FROM gone)::int)
             WHERE address_id = %(a)s
        ), log AS (
            INSERT INTO mta.changes (address_id, type_name, object_id, change, created_at)
            SELECT %(a)s::uuid, 'Email', id, 'destroyed', %(now)s::timestamptz FROM gone
            UNION ALL
            SELECT %(a)s::uuid, 'Mailbox', mailbox_id, 'updated', %(now)s::timestamptz FROM members
        )
        SELECT id::text AS id, thread_id::text AS thread_id FROM gone
        """,
        {"a": address_id, "ids": list(email_ids), "now": now},
    )
    threads = sorted({r["thread_id"] for r in rows})
    if threads:
        await fetch_all(
            conn,
            """
            WITH t AS (
                SELECT id, EXISTS (SELECT 1 FROM mta.emails e WHERE e.thread_id = th.id) AS alive
                  FROM mta.threads th WHERE th.id = ANY(%(t)s::uuid[])
            ), dropped AS (
                DELETE FROM mta.threads WHERE id IN (SELECT id FROM t WHERE NOT alive)
            )
            INSERT INTO mta.changes (address_id, type_name, object_id, change, created_at)
            SELECT %(a)s::uuid, 'Thread', id, CASE WHEN alive THEN 'updated' ELSE 'destroyed' END,
                   %(now)s::timestamptz
              FROM t
            RETURNING id
            """,
            {"a": address_id, "t": threads, "now": now},
        )
    return [r["id"] for r in rows]
