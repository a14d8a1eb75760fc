"""SQL for ``mail.sent_emails`` and ``mail.idempotency_keys``. The connection comes first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_one
from common.records import Record

_COLUMNS = (
    "id::text, account_id::text, api_key_id::text, from_address, to_addresses, cc, bcc,"
    " reply_to, subject, html, text, tags, headers, attachments, message_id, scheduled_at,"
    " created_at"
)
# The list leaves the bodies out: a page of 100 emails must not carry 100 bodies.
_LIST_COLUMNS = (
    "id::text, account_id::text, api_key_id::text, from_address, to_addresses, cc, bcc,"
    " reply_to, subject, NULL AS html, NULL AS text, tags, '{}'::jsonb AS headers,"
    " '[]'::jsonb AS attachments, message_id, scheduled_at, created_at"
)


@dataclass(frozen=True)
class SentEmail(Record):
    id: str
    account_id: str
    api_key_id: str | None
    from_address: str
    to_addresses: list[str]
    cc: list[str]
    bcc: list[str]
    reply_to: list[str]
    subject: str
    html: str | None
    text: str | None
    tags: list[dict[str, str]]
    headers: dict[str, str]
    attachments: list[dict[str, Any]]
    message_id: str
    scheduled_at: datetime | None
    created_at: datetime


async def insert(conn: Conn, email: SentEmail) -> None:
    await execute(
        conn,
        """
        INSERT INTO mail.sent_emails
            (id, account_id, api_key_id, from_address, to_addresses, cc, bcc, reply_to,
             subject, html, text, tags, headers, attachments, message_id, scheduled_at,
             created_at)
        VALUES (%(id)s, %(account_id)s, %(api_key_id)s, %(from_address)s, %(to_addresses)s,
                %(cc)s, %(bcc)s, %(reply_to)s, %(subject)s, %(html)s, %(text)s, %(tags)s,
                %(headers)s, %(attachments)s, %(message_id)s, %(scheduled_at)s, %(created_at)s)
        """,
        {
            **email.__dict__,
            "tags": Json(email.tags),
            "headers": Json(email.headers),
            "attachments": Json(email.attachments),
        },
    )


async def get(conn: Conn, account_id: str, email_id: str) -> SentEmail | None:
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS} FROM mail.sent_emails WHERE id = %s AND account_id = %s",
        (email_id, account_id),
    )
    return SentEmail.from_optional(row)


async def page(
    conn: Conn, account_id: str, *, limit: int, after: str | None, before: str | None
) -> tuple[list[SentEmail], bool]:
    """Newest first. ``after``: the page older than that email; ``before``: the newer one.

    Keyset pages on (created_at, id) over the account's index: stable while
    mail is sent meanwhile, and as fast on page 1,000 as on page 1. The
    cursor must be one of the account's emails (None otherwise: the caller
    answers 422).
    """
    args: dict[str, Any] = {"a": account_id, "limit": limit + 1, "c": after or before}
    cursor = ""
    newer = before is not None
    if after or before:
        op = ">" if newer else "<"
        cursor = (
            f" AND (created_at, id) {op} (SELECT created_at, id FROM mail.sent_emails"
            " WHERE id = %(c)s AND account_id = %(a)s)"
        )
    order = "ASC" if newer else "DESC"
    rows = await fetch_all(
        conn,
        f"""
        SELECT {_LIST_COLUMNS} FROM mail.sent_emails
         WHERE account_id = %(a)s{cursor}
         ORDER BY created_at {order}, id {order} LIMIT %(limit)s
        """,
        args,
    )
    has_more = len(rows) > limit
    found = [SentEmail.from_row(r) for r in rows[:limit]]
    return (found[::-1] if newer else found), has_more


async def exists(conn: Conn, account_id: str, email_id: str) -> bool:
    row = await fetch_one(
        conn,
        "SELECT 1 FROM mail.sent_emails WHERE id = %s AND account_id = %s",
        (email_id, account_id),
    )
    return row is not None


async def set_schedule(conn: Conn, email_id: str, when: datetime) -> None:
    await execute(
        conn, "UPDATE mail.sent_emails SET scheduled_at = %s WHERE id = %s", (when, email_id)
    )


# --- Idempotency-Key --------------------------------------------------------


@dataclass(frozen=True)
class Remembered(Record):
    fingerprint: str
    response: Any


async def lock_key(conn: Conn, account_id: str, key: str) -> bool:
    """Try the key's transaction lock: False while another request holds it."""
    row = await fetch_one(
        conn,
        "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0)) AS got",
        (f"mail.idempotency:{account_id}:{key}",),
    )
    return bool(row and row["got"])


async def remembered(conn: Conn, account_id: str, key: str, since: datetime) -> Remembered | None:
    row = await fetch_one(
        conn,
        "SELECT fingerprint, response FROM mail.idempotency_keys"
        " WHERE account_id = %s AND key = %s AND created_at > %s",
        (account_id, key, since),
    )
    return Remembered.from_optional(row)


async def remember(
    conn: Conn, account_id: str, key: str, fingerprint: str, response: Any, now: datetime
) -> None:
    # A stale row (older than the window, not yet swept) is replaced.
    await execute(
        conn,
        """
        INSERT INTO mail.idempotency_keys (account_id, key, fingerprint, response, created_at)
        VALUES (%s, %s, %s, %s, %s)
        ON CONFLICT (account_id, key) DO UPDATE
           SET fingerprint = EXCLUDED.fingerprint, response = EXCLUDED.response,
               created_at = EXCLUDED.created_at
        """,
        (account_id, key, fingerprint, Json(response), now),
    )


async def sweep_keys(conn: Conn, before: datetime) -> int:
    return await execute(
        conn, "DELETE FROM mail.idempotency_keys WHERE created_at <= %s", (before,)
    )
