"""SQL for content.menus."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_one
from common.records import Record

_COLUMNS = "id, name, label, items, created_at, updated_at"


@dataclass(frozen=True)
class Menu(Record):
    """A row of content.menus."""

    id: str
    name: str
    label: str
    # The tree of {label, url | entryId, children?} exactly as saved (free-form JSON
    # checked by menus/service.py).
    items: list[dict[str, Any]]
    created_at: datetime
    updated_at: datetime


async def list_menus(conn: Conn) -> list[Menu]:
    rows = await fetch_all(conn, f"SELECT {_COLUMNS} FROM content.menus ORDER BY name")
    return [Menu.from_row(r) for r in rows]


async def get_menu(conn: Conn, name: str, *, lock: bool = False) -> Menu | None:
    suffix = " FOR UPDATE" if lock else ""
    row = await fetch_one(
        conn, f"SELECT {_COLUMNS} FROM content.menus WHERE name = %s{suffix}", (name,)
    )
    return Menu.from_optional(row)


async def insert_menu(
    conn: Conn, menu_id: str, name: str, label: str, items: list[dict[str, Any]], now: datetime
) -> Menu:
    row = await fetch_one(
        conn,
        f"INSERT INTO content.menus (id, name, label, items, created_at, updated_at)"
        f" VALUES (%s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}",
        (menu_id, name, label, Json(items), now, now),
    )
    assert row is not None
    return Menu.from_row(row)


async def update_menu(
    conn: Conn, menu_id: str, label: str, items: list[dict[str, Any]], now: datetime
) -> Menu:
    row = await fetch_one(
        conn,
        f"UPDATE content.menus SET label = %s, items = %s, updated_at = %s WHERE id = %s"
        f" RETURNING {_COLUMNS}",
        (label, Json(items), now, menu_id),
    )
    assert row is not None
    return Menu.from_row(row)


async def delete_menu(conn: Conn, menu_id: str) -> None:
    await execute(conn, "DELETE FROM content.menus WHERE id = %s", (menu_id,))
