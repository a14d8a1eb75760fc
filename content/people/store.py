"""SQL for content.users."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record

_COLUMNS = "id, email, name, role, created_at, updated_at"


@dataclass(frozen=True)
class Person(Record):
    """A row of content.users, without its password hash."""

    id: str
    email: str
    name: str
    role: str
    created_at: datetime
    updated_at: datetime


class UserChanges(TypedDict, total=False):
    """The columns an edit of a person sets; those left out keep their value."""

    email: str
    name: str
    role: str
    password_hash: str


@dataclass(frozen=True)
class Login:
    """A person found by email at sign-in, with the hash to check (None: no password)."""

    person: Person
    password_hash: str | None


async def count_users(conn: Conn) -> int:
    return int(await fetch_val(conn, "SELECT count(*) FROM content.users"))


async def lock_people(conn: Conn) -> None:
    """Serialise setup, bootstrap and owner changes (transaction-scoped)."""
    await execute(conn, "SELECT pg_advisory_xact_lock(hashtext('content.users'))")


async def insert_user(
    conn: Conn,
    *,
    user_id: str,
    email: str,
    name: str,
    role: str,
    password_hash: str | None,
    now: datetime,
) -> Person:
    row = await fetch_one(
        conn,
        f"INSERT INTO content.users (id, email, name, role, password_hash, created_at, updated_at)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}",
        (user_id, email, name, role, password_hash, now, now),
    )
    assert row is not None
    return Person.from_row(row)


async def get_user(conn: Conn, user_id: str) -> Person | None:
    return Person.from_optional(
        await fetch_one(conn, f"SELECT {_COLUMNS} FROM content.users WHERE id = %s", (user_id,))
    )


async def get_user_for_update(conn: Conn, user_id: str) -> Person | None:
    return Person.from_optional(
        await fetch_one(
            conn, f"SELECT {_COLUMNS} FROM content.users WHERE id = %s FOR UPDATE", (user_id,)
        )
    )


async def get_login(conn: Conn, email: str) -> Login | None:
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS}, password_hash FROM content.users WHERE lower(email) = lower(%s)",
        (email,),
    )
    if row is None:
        return None
    return Login(person=Person.from_row(row), password_hash=row["password_hash"])


async def password_hash(conn: Conn, user_id: str) -> str | None:
    return await fetch_val(
        conn, "SELECT password_hash FROM content.users WHERE id = %s", (user_id,)
    )


async def list_users(conn: Conn, *, limit: int, offset: int) -> tuple[list[Person], int]:
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM content.users ORDER BY created_at, id LIMIT %s OFFSET %s",
        (limit, offset),
    )
    return [Person.from_row(r) for r in rows], await count_users(conn)


async def count_owners(conn: Conn) -> int:
    return int(await fetch_val(conn, "SELECT count(*) FROM content.users WHERE role = 'owner'"))


async def update_user(
    conn: Conn, user_id: str, changes: UserChanges, now: datetime
) -> Person | None:
    allowed = {"email", "name", "role", "password_hash"}
    sets = [f"{column} = %({column})s" for column in changes if column in allowed]
    row = await fetch_one(
        conn,
        f"UPDATE content.users SET {', '.join([*sets, 'updated_at = %(now)s'])}"
        f" WHERE id = %(id)s RETURNING {_COLUMNS}",
        {**changes, "now": now, "id": user_id},
    )
    return Person.from_optional(row)


async def delete_user(conn: Conn, user_id: str) -> bool:
    return await execute(conn, "DELETE FROM content.users WHERE id = %s", (user_id,)) > 0


async def all_accounts(conn: Conn) -> list[Person]:
    rows = await fetch_all(conn, f"SELECT {_COLUMNS} FROM content.users ORDER BY created_at, id")
    return [Person.from_row(r) for r in rows]
