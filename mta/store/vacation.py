"""Vacation responses (JMAP VacationResponse, RFC 8621 8) and the replies they sent.

The only module that writes ``mta.vacation_responses``, ``mta.vacation_replies``
(who was answered when, RFC 5230's once per period) and ``mta.auto_replies``
(the record of each reply queued). The responder itself: mta/vacation.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from common.db import Conn, execute, fetch_all, fetch_one
from common.records import Record
from mta.store import changes


@dataclass(frozen=True)
class VacationResponse(Record):
    is_enabled: bool = False
    from_date: datetime | None = None
    to_date: datetime | None = None
    subject: str | None = None
    text_body: str | None = None
    html_body: str | None = None


async def get(conn: Conn, address_id: str) -> VacationResponse:
    """The address's response (a disabled, empty one when it never set one)."""
    row = await fetch_one(
        conn,
        """
        SELECT is_enabled, from_date, to_date, subject, text_body, html_body
          FROM mta.vacation_responses WHERE address_id = %s
        """,
        (address_id,),
    )
    return VacationResponse() if row is None else VacationResponse.from_row(row)


async def update(
    conn: Conn, address_id: str, values: dict[str, Any], now: datetime
) -> VacationResponse:
    """Change the response's fields in ``values`` and log it; the response now.

    A new or changed response answers everyone once again (RFC 5230 4.2):
    the record of who was answered is forgotten.
    """
    merged = replace(await get(conn, address_id), **values)
    await execute(
        conn,
        """
        INSERT INTO mta.vacation_responses
            (address_id, is_enabled, from_date, to_date, subject, text_body, html_body,
             updated_at)
        VALUES (%(a)s, %(is_enabled)s, %(from_date)s, %(to_date)s, %(subject)s,
                %(text_body)s, %(html_body)s, %(now)s)
        ON CONFLICT (address_id) DO UPDATE SET
            is_enabled = EXCLUDED.is_enabled, from_date = EXCLUDED.from_date,
            to_date = EXCLUDED.to_date, subject = EXCLUDED.subject,
            text_body = EXCLUDED.text_body, html_body = EXCLUDED.html_body,
            updated_at = EXCLUDED.updated_at
        """,
        {**asdict(merged), "a": address_id, "now": now},
    )
    await execute(conn, "DELETE FROM mta.vacation_replies WHERE address_id = %s", (address_id,))
    await changes.record(conn, address_id, "VacationResponse", [address_id], "updated", now)
    return merged


@dataclass(frozen=True)
class Active(Record):
    """An enabled response in its dates, with the name its reply is signed with."""

    address_id: str
    subject: str | None
    text_body: str | None
    html_body: str | None
    identity_name: str | None


async def active(conn: Conn, address_ids: Sequence[str], now: datetime) -> list[Active]:
    """The responses of ``address_ids`` that answer at ``now``."""
    rows = await fetch_all(
        conn,
        """
        SELECT v.address_id::text AS address_id, v.subject, v.text_body, v.html_body,
               (SELECT i.name FROM mta.identities i WHERE i.address_id = v.address_id
                 ORDER BY i.created_at LIMIT 1) AS identity_name
          FROM mta.vacation_responses v
         WHERE v.address_id = ANY(%s::uuid[]) AND v.is_enabled
           AND (v.from_date IS NULL OR v.from_date <= %s)
           AND (v.to_date IS NULL OR v.to_date > %s)
        """,
        (list(address_ids), now, now),
    )
    return [Active.from_row(row) for row in rows]


async def claim_reply(
    conn: Conn, address_id: str, sender: str, now: datetime, period: timedelta
) -> bool:
    """Whether ``sender`` may be answered now (not in the last ``period``); marks it so.

    One reply per sender per period: the upsert wins only when the last is old.
    """
    won = await fetch_one(
        conn,
        """
        INSERT INTO mta.vacation_replies (address_id, sender, replied_at) VALUES (%s, %s, %s)
        ON CONFLICT (address_id, sender) DO UPDATE SET replied_at = EXCLUDED.replied_at
         WHERE mta.vacation_replies.replied_at <= %s
        RETURNING 1 AS won
        """,
        (address_id, sender, now, now - period),
    )
    return won is not None


async def record_reply(
    conn: Conn, address_id: str, rcpt_to: str, message: bytes, now: datetime, outbound_id: str
) -> None:
    """Keep the vacation reply queued as ``outbound_id`` (status 'sent')."""
    await execute(
        conn,
        """
        INSERT INTO mta.auto_replies
            (address_id, kind, mail_from, rcpt_to, message, created_at, status, outbound_id)
        VALUES (%s, 'vacation', '', %s, %s, %s, 'sent', %s)
        """,
        (address_id, rcpt_to, message, now, outbound_id),
    )
