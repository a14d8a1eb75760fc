"""SQL for content.media: the library's rows (the bytes live in the blob store)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record

_COLUMNS = (
    "id, filename, type, size, sha256, width, height, alt, caption, folder, url,"
    " uploaded_by, created_at, updated_at"
)


@dataclass(frozen=True)
class Media(Record):
    """A row of content.media."""

    id: str
    filename: str
    type: str
    size: int
    sha256: str
    width: int | None
    height: int | None
    alt: str
    caption: str
    folder: str
    url: str
    uploaded_by: str | None
    created_at: datetime
    updated_at: datetime

    @property
    def is_image(self) -> bool:
        return self.type.startswith("image/")


@dataclass(frozen=True)
class NewMedia:
    """What an upload stored, before its row exists."""

    id: str
    filename: str
    type: str
    size: int
    sha256: str
    width: int | None
    height: int | None
    url: str


class MediaText(TypedDict, total=False):
    """The editable text of a media row; a key left out keeps its value."""

    alt: str
    caption: str
    folder: str


@dataclass(frozen=True)
class MediaFilters:
    search: str | None = None
    folder: str | None = None
    type_prefix: str | None = None


async def insert_media(
    conn: Conn, new: NewMedia, text: MediaText, uploaded_by: str, now: datetime
) -> Media:
    row = await fetch_one(
        conn,
        f"INSERT INTO content.media (id, filename, type, size, sha256, width, height, alt,"
        f" caption, folder, url, uploaded_by, created_at, updated_at)"
        f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}",
        (
            new.id,
            new.filename,
            new.type,
            new.size,
            new.sha256,
            new.width,
            new.height,
            text.get("alt", ""),
            text.get("caption", ""),
            text.get("folder", ""),
            new.url,
            uploaded_by,
            now,
            now,
        ),
    )
    assert row is not None
    return Media.from_row(row)


async def get_media(conn: Conn, media_id: str, *, lock: bool = False) -> Media | None:
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS} FROM content.media WHERE id = %s{' FOR UPDATE' if lock else ''}",
        (media_id,),
    )
    return Media.from_optional(row)


async def media_by_ids(conn: Conn, ids: Sequence[str], *, share: bool = False) -> dict[str, Media]:
    """The rows of these ids that exist, in one query (field validation, delivery).

    ``share`` locks them FOR SHARE until the transaction ends: an entry saved
    with a media id and the deletion of that media cannot both commit.
    """
    if not ids:
        return {}
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM content.media WHERE id = ANY(%s){' FOR SHARE' if share else ''}",
        (list(ids),),
    )
    return {row["id"]: Media.from_row(row) for row in rows}


async def file_of(conn: Conn, sha256: str) -> Media | None:
    """A row holding these bytes: the file route serves only what the library holds."""
    row = await fetch_one(
        conn,
        f"SELECT {_COLUMNS} FROM content.media WHERE sha256 = %s ORDER BY created_at LIMIT 1",
        (sha256,),
    )
    return Media.from_optional(row)


def _where(filters: MediaFilters) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if filters.search:
        pattern = "%" + _escape_like(filters.search) + "%"
        clauses.append("(filename ILIKE %s OR alt ILIKE %s OR caption ILIKE %s OR folder ILIKE %s)")
        params += [pattern] * 4
    if filters.folder is not None:
        clauses.append("folder = %s")
        params.append(filters.folder)
    if filters.type_prefix:
        clauses.append("type LIKE %s")
        params.append(_escape_like(filters.type_prefix) + "%")
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


async def list_media(
    conn: Conn, filters: MediaFilters, offset: int, limit: int
) -> tuple[list[Media], int]:
    where, params = _where(filters)
    total = await fetch_val(conn, f"SELECT count(*) FROM content.media{where}", params)
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM content.media{where}"
        f" ORDER BY created_at DESC, id DESC OFFSET %s LIMIT %s",
        [*params, offset, limit],
    )
    return [Media.from_row(r) for r in rows], int(total)


async def update_media(conn: Conn, media_id: str, text: MediaText, now: datetime) -> Media | None:
    row = await fetch_one(
        conn,
        f"UPDATE content.media SET alt = coalesce(%s, alt), caption = coalesce(%s, caption),"
        f" folder = coalesce(%s, folder), updated_at = %s WHERE id = %s RETURNING {_COLUMNS}",
        (text.get("alt"), text.get("caption"), text.get("folder"), now, media_id),
    )
    return Media.from_optional(row)


async def delete_media(conn: Conn, media_id: str) -> None:
    await execute(conn, "DELETE FROM content.media WHERE id = %s", (media_id,))


async def sha256_in_use(conn: Conn, sha256: str) -> bool:
    """Whether any row still holds these bytes (then the blob must stay)."""
    return bool(
        await fetch_val(
            conn, "SELECT EXISTS (SELECT 1 FROM content.media WHERE sha256 = %s)", (sha256,)
        )
    )


async def entries_mentioning(conn: Conn, media_id: str) -> list[dict[str, Any]]:
    """Entries (trashed too) whose data holds this id as a string anywhere.

    A coarse filter in SQL (jsonpath over the whole document); the caller
    keeps those whose media or gallery fields really hold it.
    """
    return await fetch_all(
        conn,
        "SELECT e.id, e.title, e.data, e.deleted_at, t.name AS type_name, t.fields"
        "  FROM content.entries e JOIN content.content_types t ON t.id = e.type_id"
        " WHERE jsonb_path_exists(e.data, 'strict $.** ? (@ == $id)',"
        "                         jsonb_build_object('id', %s::text))"
        " ORDER BY e.updated_at DESC, e.id",
        (media_id,),
    )


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
