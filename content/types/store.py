"""SQL for content.content_types."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_one

_COLUMNS = "id, name, label, fields, single, preview_url, created_at, updated_at"


async def list_types(conn: Conn) -> list[dict[str, Any]]:
    return await fetch_all(conn, f"SELECT {_COLUMNS} FROM content.content_types ORDER BY name")


async def type_names(conn: Conn) -> set[str]:
    rows = await fetch_all(conn, "SELECT name FROM content.content_types")
    return {row["name"] for row in rows}


async def get_type(conn: Conn, name: str, *, lock: bool = False) -> dict[str, Any] | None:
    suffix = " FOR UPDATE" if lock else ""
    return await fetch_one(
        conn, f"SELECT {_COLUMNS} FROM content.content_types WHERE name = %s{suffix}", (name,)
    )


async def get_type_by_id(conn: Conn, type_id: str) -> dict[str, Any] | None:
    return await fetch_one(
        conn, f"SELECT {_COLUMNS} FROM content.content_types WHERE id = %s", (type_id,)
    )


async def insert_type(
    conn: Conn,
    *,
    type_id: str,
    name: str,
    label: str,
    fields: list[dict[str, Any]],
    single: bool,
    preview_url: str | None,
    now: datetime,
) -> dict[str, Any]:
    row = await fetch_one(
        conn,
        f"INSERT INTO content.content_types (id, name, label, fields, single, preview_url,"
        f" created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}",
        (type_id, name, label, Json(fields), single, preview_url, now, now),
    )
    assert row is not None
    return row


async def update_type(
    conn: Conn,
    type_id: str,
    *,
    label: str,
    fields: list[dict[str, Any]],
    single: bool,
    preview_url: str | None,
    now: datetime,
) -> dict[str, Any]:
    row = await fetch_one(
        conn,
        f"UPDATE content.content_types SET label = %s, fields = %s, single = %s,"
        f" preview_url = %s, updated_at = %s WHERE id = %s RETURNING {_COLUMNS}",
        (label, Json(fields), single, preview_url, now, type_id),
    )
    assert row is not None
    return row


async def delete_type(conn: Conn, type_id: str) -> None:
    await execute(conn, "DELETE FROM content.content_types WHERE id = %s", (type_id,))


async def referencing_types(conn: Conn, name: str) -> list[str]:
    """Other types whose reference fields target ``name`` (at any depth)."""
    rows = await fetch_all(
        conn,
        "SELECT name FROM content.content_types"
        " WHERE name <> %s AND fields::text LIKE %s ORDER BY name",
        (name, f'%"to": "{name}"%'),
    )
    return [row["name"] for row in rows]
