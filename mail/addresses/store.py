"""SQL for ``mail.addresses``. Ownership goes through the domain's account_id."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record
from mail.domains import sql
from mail.web.lists import ListParams, Sorts

# Never the password hash: it is checked by the MTA and webmail, never shown.
_COLUMNS = (
    "a.id::text, a.domain_id::text, d.account_id::text, d.name AS domain_name, a.local_part,"
    " a.display_name, a.quota_bytes, a.recovery_email, a.created_at, a.updated_at"
)
_FROM = "mail.addresses a JOIN mail.domains d ON d.id = a.domain_id"

ADDRESS_SORTS = Sorts(
    columns={
        "local_part": "a.local_part",
        "created_at": "a.created_at",
        "quota_bytes": "a.quota_bytes",
        "display_name": "a.display_name",
    },
    default="local_part",
    default_direction="asc",
    tiebreak="a.id",
)


@dataclass(frozen=True)
class Address(Record):
    """An address with its domain's name and owner (``_COLUMNS``): never the password hash."""

    id: str
    domain_id: str
    account_id: str
    domain_name: str
    local_part: str
    display_name: str
    quota_bytes: int
    recovery_email: str | None
    created_at: datetime
    updated_at: datetime

    @property
    def email(self) -> str:
        return f"{self.local_part}@{self.domain_name}"


EDITABLE = frozenset({"display_name", "quota_bytes"})


async def insert(
    conn: Conn,
    *,
    domain_id: str,
    local_part: str,
    display_name: str,
    password_hash: str,
    quota_bytes: int,
    recovery_email: str | None,
    now: datetime,
) -> str:
    return str(
        await fetch_val(
            conn,
            "INSERT INTO mail.addresses (domain_id, local_part, display_name, password_hash,"
            " quota_bytes, recovery_email, created_at, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                domain_id,
                local_part,
                display_name,
                password_hash,
                quota_bytes,
                recovery_email,
                now,
                now,
            ),
        )
    )


async def exists(conn: Conn, domain_id: str, local_part: str) -> bool:
    return bool(
        await fetch_val(
            conn,
            "SELECT EXISTS (SELECT 1 FROM mail.addresses WHERE domain_id = %s AND local_part = %s)",
            (domain_id, local_part),
        )
    )


async def get_owned(
    conn: Conn, account_id: str, address_id: str, *, for_update: bool = False
) -> Address | None:
    lock = " FOR UPDATE OF a" if for_update else ""
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE a.id = %s AND d.account_id = %s{lock}",
        (address_id, account_id),
    )
    return Address.from_optional(row)


async def get(conn: Conn, address_id: str) -> Address | None:
    row = await fetch_one(conn, f"SELECT {_COLUMNS} FROM {_FROM} WHERE a.id = %s", (address_id,))
    return Address.from_optional(row)


async def list_for_domain(
    conn: Conn, domain_id: str, params: ListParams
) -> tuple[list[Address], int]:
    where = "a.domain_id = %(domain)s"
    args: dict[str, Any] = {"domain": domain_id}
    if params.search_pattern:
        where += " AND (a.local_part ILIKE %(search)s OR a.display_name ILIKE %(search)s)"
        args["search"] = params.search_pattern
    rows, total = await sql.page(
        conn,
        columns=_COLUMNS,
        joined=_FROM,
        table="mail.addresses a",
        where=where,
        args=args,
        params=params,
    )
    return [Address.from_row(row) for row in rows], total


async def update(conn: Conn, address_id: str, changes: dict[str, Any], now: datetime) -> None:
    allowed = EDITABLE | {"password_hash", "recovery_email"}
    await sql.update_columns(conn, "mail.addresses", address_id, changes, now, allowed=allowed)


async def delete(conn: Conn, address_id: str) -> int:
    """Remove the address; its mailbox rows (schema mta) go by ON DELETE CASCADE."""
    return await execute(conn, "DELETE FROM mail.addresses WHERE id = %s", (address_id,))


async def for_account(conn: Conn, account_id: str) -> list[Address]:
    """Every address of an account in one statement, by domain then local part (pickers)."""
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE d.account_id = %s ORDER BY d.name, a.local_part",
        (account_id,),
    )
    return [Address.from_row(r) for r in rows]
