"""SQL for ``mail.domains``. Every function takes the connection first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_one, fetch_val
from common.records import Record
from mail.dns.lookup import Found
from mail.domains import sql
from mail.web.lists import ListParams, Sorts

COLUMNS = (
    "d.id::text, d.account_id::text, d.name, d.fallback_domain_id::text, d.description,"
    " d.dmarc_policy, d.default_quota_bytes, d.dns_status, d.dns_found, d.dns_checked_at,"
    " d.created_at, d.updated_at"
)
# With the fallback's name and the address count, for the serializer.
_DETAIL = (
    f"{COLUMNS}, f.name AS fallback_domain_name,"
    " (SELECT count(*) FROM mail.addresses a WHERE a.domain_id = d.id) AS address_count"
)
_FROM = "mail.domains d LEFT JOIN mail.domains f ON f.id = d.fallback_domain_id"

DOMAIN_SORTS = Sorts(
    columns={"name": "d.name", "created_at": "d.created_at", "dns_status": "d.dns_status"},
    default="created_at",
    tiebreak="d.id",
)


@dataclass(frozen=True)
class Domain(Record):
    """A hosted domain, with its fallback's name and its address count (``_DETAIL``)."""

    id: str
    account_id: str
    name: str
    fallback_domain_id: str | None
    description: str
    dmarc_policy: str
    default_quota_bytes: int
    dns_status: str
    # What the last DNS check found, keyed "<TYPE> <name>"; None before the first.
    dns_found: Found | None
    dns_checked_at: datetime | None
    created_at: datetime
    updated_at: datetime
    fallback_domain_name: str | None
    address_count: int


EDITABLE = frozenset({"description", "dmarc_policy", "default_quota_bytes"})


async def insert(conn: Conn, *, account_id: str, name: str, description: str, now: datetime) -> str:
    return str(
        await fetch_val(
            conn,
            "INSERT INTO mail.domains (account_id, name, description, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s) RETURNING id",
            (account_id, name, description, now, now),
        )
    )


async def get(conn: Conn, domain_id: str) -> Domain | None:
    return Domain.from_optional(
        await fetch_one(conn, f"SELECT {_DETAIL} FROM {_FROM} WHERE d.id = %s", (domain_id,))
    )


async def get_owned(
    conn: Conn, account_id: str, domain_id: str, *, for_update: bool = False
) -> Domain | None:
    lock = " FOR UPDATE OF d" if for_update else ""
    row = await fetch_one(
        conn,
        f"SELECT {_DETAIL} FROM {_FROM} WHERE d.id = %s AND d.account_id = %s{lock}",
        (domain_id, account_id),
    )
    return Domain.from_optional(row)


async def get_by_name(conn: Conn, name: str) -> Domain | None:
    return Domain.from_optional(
        await fetch_one(conn, f"SELECT {_DETAIL} FROM {_FROM} WHERE d.name = %s", (name,))
    )


async def exists_name(conn: Conn, name: str) -> bool:
    return bool(
        await fetch_val(conn, "SELECT EXISTS (SELECT 1 FROM mail.domains WHERE name = %s)", (name,))
    )


async def list_for_account(
    conn: Conn, account_id: str, params: ListParams
) -> tuple[list[Domain], int]:
    where = "d.account_id = %(account)s"
    args: dict[str, Any] = {"account": account_id}
    if params.search_pattern:
        where += " AND d.name ILIKE %(search)s"
        args["search"] = params.search_pattern
    rows, total = await sql.page(
        conn,
        columns=_DETAIL,
        joined=_FROM,
        table="mail.domains d",
        where=where,
        args=args,
        params=params,
    )
    return [Domain.from_row(row) for row in rows], total


async def update(conn: Conn, domain_id: str, changes: dict[str, Any], now: datetime) -> None:
    await sql.update_columns(conn, "mail.domains", domain_id, changes, now, allowed=EDITABLE)


async def set_fallback(conn: Conn, domain_id: str, fallback_id: str | None, now: datetime) -> None:
    await execute(
        conn,
        "UPDATE mail.domains SET fallback_domain_id = %s, updated_at = %s WHERE id = %s",
        (fallback_id, now, domain_id),
    )


async def fallback_chain(conn: Conn, start_id: str) -> list[str]:
    """The domain ids reached by following fallbacks from ``start_id`` (itself first)."""
    rows = await fetch_all(
        conn,
        """
        WITH RECURSIVE chain(id, fallback_domain_id, depth) AS (
            SELECT id, fallback_domain_id, 0 FROM mail.domains WHERE id = %s
          UNION ALL
            SELECT d.id, d.fallback_domain_id, c.depth + 1
              FROM mail.domains d JOIN chain c ON d.id = c.fallback_domain_id
             WHERE c.depth < 1000
        ) CYCLE id SET is_cycle USING path
        SELECT id::text FROM chain WHERE NOT is_cycle ORDER BY depth
        """,
        (start_id,),
    )
    return [row["id"] for row in rows]


async def lock_account_fallbacks(conn: Conn, account_id: str) -> None:
    """Serialise fallback changes of one account, so two requests cannot form a loop."""
    await execute(
        conn, "SELECT pg_advisory_xact_lock(hashtext('mail.fallback:' || %s))", (account_id,)
    )


async def delete(conn: Conn, domain_id: str) -> int:
    """Remove the domain; its keys, addresses and their mail go by ON DELETE CASCADE."""
    return await execute(conn, "DELETE FROM mail.domains WHERE id = %s", (domain_id,))


async def save_check(
    conn: Conn, domain_id: str, *, status: str, found: Found, now: datetime
) -> None:
    await execute(
        conn,
        "UPDATE mail.domains SET dns_status = %s, dns_found = %s, dns_checked_at = %s"
        " WHERE id = %s",
        (status, Json(found), now, domain_id),
    )


async def due_for_check(conn: Conn, before: datetime, limit: int) -> list[str]:
    rows = await fetch_all(
        conn,
        "SELECT id::text FROM mail.domains WHERE dns_checked_at IS NULL OR dns_checked_at < %s"
        " ORDER BY dns_checked_at NULLS FIRST, id LIMIT %s",
        (before, limit),
    )
    return [row["id"] for row in rows]
