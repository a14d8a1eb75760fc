"""SQL for content.content_types."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, Json, execute, fetch_all, fetch_one
from common.records import Record
from content.types.fields import FieldDefinition

_COLUMNS = "id, name, label, fields, single, preview_url, created_at, updated_at"


@dataclass(frozen=True)
class TypeValues:
    """What a type definition sets: checked by types/service.py, stored as is."""

    name: str
    label: str
    fields: list[FieldDefinition]
    single: bool
    preview_url: str | None


@dataclass(frozen=True)
class ContentType(Record):
    """A row of content.content_types."""

    id: str
    name: str
    label: str
    fields: list[FieldDefinition]
    single: bool
    preview_url: str | None
    created_at: datetime
    updated_at: datetime


async def list_types(conn: Conn) -> list[ContentType]:
    rows = await fetch_all(conn, f"SELECT {_COLUMNS} FROM content.content_types ORDER BY name")
    return [ContentType.from_row(r) for r in rows]


async def type_names(conn: Conn) -> set[str]:
    rows = await fetch_all(conn, "SELECT name FROM content.content_types")
    return {row["name"] for row in rows}


async def get_type(conn: Conn, name: str, *, lock: bool = False) -> ContentType | None:
    suffix = " FOR UPDATE" if lock else ""
    row = await fetch_one(
        conn, f"SELECT {_COLUMNS} FROM content.content_types WHERE name = %s{suffix}", (name,)
    )
    return ContentType.from_optional(row)


async def get_type_by_id(conn: Conn, type_id: str) -> ContentType | None:
    row = await fetch_one(
        conn, f"SELECT {_COLUMNS} FROM content.content_types WHERE id = %s", (type_id,)
    )
    return ContentType.from_optional(row)


async def insert_type(conn: Conn, type_id: str, values: TypeValues, now: datetime) -> ContentType:
    row = await fetch_one(
        conn,
        f"INSERT INTO content.content_types (id, name, label, fields, single, preview_url,"
        f" created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}",
        (
            type_id,
            values.name,
            values.label,
            Json(values.fields),
            values.single,
            values.preview_url,
            now,
            now,
        ),
    )
    assert row is not None
    return ContentType.from_row(row)


async def update_type(conn: Conn, type_id: str, values: TypeValues, now: datetime) -> ContentType:
    """Everything but the name, which never changes."""
    row = await fetch_one(
        conn,
        f"UPDATE content.content_types SET label = %s, fields = %s, single = %s,"
        f" preview_url = %s, updated_at = %s WHERE id = %s RETURNING {_COLUMNS}",
        (values.label, Json(values.fields), values.single, values.preview_url, now, type_id),
    )
    assert row is not None
    return ContentType.from_row(row)


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
