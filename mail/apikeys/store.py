"""SQL for ``mail.api_keys``. Every function takes the connection first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, execute, fetch_one, fetch_val
from common.records import Record
from mail.accounts.store import Account, from_prefixed, select_columns
from mail.domains import sql
from mail.web.lists import ListParams, Sorts

_COLUMNS = (
    "k.id::text, k.account_id::text, k.name, k.permission, k.domain_id::text,"
    " d.name AS domain_name, k.lookup, k.created_at, k.last_used_at"
)
_FROM = "mail.api_keys k LEFT JOIN mail.domains d ON d.id = k.domain_id"

SORTS = Sorts(
    columns={"created_at": "k.created_at", "name": "k.name", "last_used_at": "k.last_used_at"},
    default="created_at",
    tiebreak="k.id",
)


@dataclass(frozen=True)
class ApiKey(Record):
    """A key as the panel lists it; never its hash."""

    id: str
    account_id: str
    name: str
    permission: str
    domain_id: str | None
    domain_name: str | None
    lookup: str
    created_at: datetime
    last_used_at: datetime | None


@dataclass(frozen=True)
class StoredKey:
    """A key with its token hash and its account, for the one place that checks a token."""

    key: ApiKey
    token_hash: str
    account: Account


async def insert(
    conn: Conn,
    *,
    account_id: str,
    name: str,
    permission: str,
    domain_id: str | None,
    lookup: str,
    token_hash: str,
    now: datetime,
) -> str:
    return str(
        await fetch_val(
            conn,
            """
            INSERT INTO mail.api_keys
                   (account_id, name, permission, domain_id, lookup, token_hash, created_at)
            VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id::text
            """,
            (account_id, name, permission, domain_id, lookup, token_hash, now),
        )
    )


async def get_owned(conn: Conn, account_id: str, key_id: str) -> ApiKey | None:
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS} FROM {_FROM} WHERE k.id = %s AND k.account_id = %s",
        (key_id, account_id),
    )
    return ApiKey.from_optional(row)


async def by_lookup(conn: Conn, lookup: str) -> StoredKey | None:
    """The key whose token starts ``re_<lookup>_``, with its account, in one query."""
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS}, k.token_hash, {select_columns('a', 'a_')} FROM {_FROM}"
        " JOIN mail.accounts a ON a.id = k.account_id WHERE k.lookup = %s",
        (lookup,),
    )
    if row is None:
        return None
    return StoredKey(ApiKey.from_row(row), row["token_hash"], from_prefixed(row, "a_"))


async def page(conn: Conn, account_id: str, params: ListParams) -> tuple[list[ApiKey], int]:
    where = "k.account_id = %(a)s"
    args: dict[str, Any] = {"a": account_id}
    if params.search_pattern:
        where += " AND k.name ILIKE %(q)s"
        args["q"] = params.search_pattern
    rows, total = await sql.page(
        conn,
        columns=_COLUMNS,
        joined=_FROM,
        table="mail.api_keys k",
        where=where,
        args=args,
        params=params,
    )
    return [ApiKey.from_row(r) for r in rows], total


async def delete(conn: Conn, account_id: str, key_id: str) -> bool:
    deleted = await execute(
        conn, "DELETE FROM mail.api_keys WHERE id = %s AND account_id = %s", (key_id, account_id)
    )
    return bool(deleted)


async def touch(conn: Conn, key_id: str, now: datetime) -> None:
    await execute(conn, "UPDATE mail.api_keys SET last_used_at = %s WHERE id = %s", (now, key_id))
