"""An account's suppression list: addresses its mail is not sent to.

Hard bounces and complaints add to it (the outbound worker, the inbound
bounce matcher); the panel adds and removes by hand through mta/mailstore.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record

REASONS = ("bounce", "complaint", "manual")

_COLUMNS = "id::text, account_id::text, email, reason, email_id::text, created_at"


@dataclass(frozen=True)
class Suppression(Record):
    id: str
    account_id: str
    email: str
    reason: str
    email_id: str | None
    created_at: datetime


# Public sort name -> SQL, for the panel's list parameters.
SORTS = {"created_at": "created_at", "email": "email", "reason": "reason"}


async def add(
    conn: Conn,
    account_id: str,
    email: str,
    reason: str,
    now: datetime,
    email_id: str | None = None,
) -> Suppression:
    """Suppress ``email``; a duplicate raises the unique violation (the panel answers 409)."""
    row = await fetch_one(
        conn,
        f"""
        INSERT INTO mta.suppressions (account_id, email, reason, email_id, created_at)
        VALUES (%s, %s, %s, %s, %s) RETURNING {_COLUMNS}
        """,
        (account_id, email.strip().lower(), reason, email_id, now),
    )
    assert row is not None
    return Suppression.from_row(row)


async def ensure(
    conn: Conn,
    account_id: str,
    email: str,
    reason: str,
    now: datetime,
    email_id: str | None = None,
) -> bool:
    """Suppress ``email`` unless it already is (the worker's bounces); True if added."""
    added = await execute(
        conn,
        """
        INSERT INTO mta.suppressions (account_id, email, reason, email_id, created_at)
        VALUES (%s, %s, %s, %s, %s) ON CONFLICT (account_id, email) DO NOTHING
        """,
        (account_id, email.strip().lower(), reason, email_id, now),
    )
    return bool(added)


async def delete(conn: Conn, account_id: str, suppression_id: str) -> bool:
    return bool(
        await fetch_val(
            conn,
            "DELETE FROM mta.suppressions WHERE id = %s AND account_id = %s RETURNING id",
            (suppression_id, account_id),
        )
    )


async def suppressed(conn: Conn, account_id: str, emails: list[str]) -> set[str]:
    """Which of ``emails`` (compared lower-cased) the account suppresses; lower-cased."""
    if not emails:
        return set()
    rows = await fetch_all(
        conn,
        "SELECT email FROM mta.suppressions WHERE account_id = %s AND email = ANY(%s)",
        (account_id, [e.strip().lower() for e in emails]),
    )
    return {r["email"] for r in rows}


async def page(
    conn: Conn,
    account_id: str,
    *,
    limit: int,
    offset: int,
    order_by: str,
    search: str | None = None,
) -> tuple[list[Suppression], int]:
    """One page of the account's suppressions; ``order_by`` comes from SORTS only."""
    where = "account_id = %(acc)s" + (" AND email LIKE %(search)s" if search else "")
    params = {
        "acc": account_id,
        "search": f"%{_escape_like(search.lower())}%" if search else None,
        "lim": limit,
        "off": offset,
    }
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM mta.suppressions WHERE {where} "
        f"ORDER BY {order_by}, id LIMIT %(lim)s OFFSET %(off)s",
        params,
    )
    total = await fetch_val(conn, f"SELECT count(*) FROM mta.suppressions WHERE {where}", params)
    return [Suppression.from_row(row) for row in rows], int(total)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
