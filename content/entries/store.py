"""SQL for content.entries and content.revisions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict

from common.db import Conn, Json, execute, fetch_all, fetch_one, fetch_val
from common.records import Record
from content.auth.principal import Actor

_ENTRY = (
    "e.id, e.type_id, t.name AS type_name, e.slug, e.title, e.data, e.status, e.locale,"
    " e.author_id, e.publish_at, e.published_at, e.created_at, e.updated_at, e.deleted_at,"
    " e.revision"
)
_FROM = "content.entries e JOIN content.content_types t ON t.id = e.type_id"
# For other readers of entries (delivery/store.py): the Entry columns and their join.
SELECT_ENTRY = f"SELECT {_ENTRY} FROM {_FROM}"
_REVISION = "entry_id, number, title, slug, locale, status, data, actor, note, created_at"

SORTS = {
    "updatedAt": "e.updated_at",
    "createdAt": "e.created_at",
    "publishedAt": "e.published_at",
    "title": "e.title",
}


@dataclass(frozen=True)
class Entry(Record):
    """A row of content.entries with its type's name."""

    id: str
    type_id: str
    type_name: str
    slug: str
    title: str
    # The entry's field values (and data.__layout): free-form JSON, shaped by
    # its type's field definitions, so a dict.
    data: dict[str, Any]
    status: str
    locale: str
    author_id: str | None
    publish_at: datetime | None
    published_at: datetime | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None
    revision: int


class EntryChanges(TypedDict, total=False):
    """The columns an edit sets; those left out keep their value."""

    title: str
    slug: str
    locale: str
    data: dict[str, Any]
    status: str
    published_at: datetime | None
    publish_at: datetime | None


@dataclass(frozen=True)
class EntryFilters:
    """What a list of entries is narrowed to; None leaves a filter out."""

    type: str | None = None
    status: str | None = None
    author: str | None = None
    locale: str | None = None
    search: str | None = None
    # A term slug, or taxonomy:slug to name one taxonomy's term.
    term: str | None = None


@dataclass(frozen=True)
class Revision(Record):
    """A row of content.revisions: the entry as one save left it."""

    entry_id: str
    number: int
    title: str
    slug: str
    locale: str
    status: str
    data: dict[str, Any]
    # Actor.as_json() as it was stored with the revision.
    actor: dict[str, Any]
    note: str
    created_at: datetime


async def insert_entry(
    conn: Conn,
    *,
    entry_id: str,
    type_id: str,
    slug: str,
    title: str,
    data: dict[str, Any],
    status: str,
    locale: str,
    author_id: str | None,
    publish_at: datetime | None,
    published_at: datetime | None,
    now: datetime,
) -> None:
    await execute(
        conn,
        "INSERT INTO content.entries (id, type_id, slug, title, data, status, locale, author_id,"
        " publish_at, published_at, created_at, updated_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            entry_id,
            type_id,
            slug,
            title,
            Json(data),
            status,
            locale,
            author_id,
            publish_at,
            published_at,
            now,
            now,
        ),
    )


async def get_entry(
    conn: Conn, entry_id: str, *, lock: bool = False, trashed: bool | None = False
) -> Entry | None:
    """One entry; ``trashed`` False (live only), True (trash only) or None (either)."""
    where = {False: " AND e.deleted_at IS NULL", True: " AND e.deleted_at IS NOT NULL", None: ""}
    suffix = " FOR UPDATE OF e" if lock else ""
    row = await fetch_one(
        conn,
        f"SELECT {_ENTRY} FROM {_FROM} WHERE e.id = %s{where[trashed]}{suffix}",
        (entry_id,),
    )
    return Entry.from_optional(row)


async def single_entry(conn: Conn, type_id: str) -> Entry | None:
    """The live entry of a single-kind type, at any status."""
    row = await fetch_one(
        conn,
        f"SELECT {_ENTRY} FROM {_FROM} WHERE e.type_id = %s AND e.deleted_at IS NULL LIMIT 1",
        (type_id,),
    )
    return Entry.from_optional(row)


async def get_entries(conn: Conn, entry_ids: list[str]) -> dict[str, Entry]:
    """Entries by id, trashed ones included (callers decide what to leave out)."""
    rows = await fetch_all(conn, f"SELECT {_ENTRY} FROM {_FROM} WHERE e.id = ANY(%s)", (entry_ids,))
    return {row["id"]: Entry.from_row(row) for row in rows}


async def update_entry(conn: Conn, entry_id: str, changes: EntryChanges, now: datetime) -> None:
    """Apply changes and count a new revision."""
    params: dict[str, Any] = {**changes, "id": entry_id, "now": now}
    if "data" in params:
        params["data"] = Json(params["data"])
    sets = [f"{column} = %({column})s" for column in changes]
    await execute(
        conn,
        f"UPDATE content.entries SET {', '.join([*sets, 'updated_at = %(now)s'])},"
        " revision = revision + 1 WHERE id = %(id)s",
        params,
    )


async def set_trashed(
    conn: Conn, entry_id: str, deleted_at: datetime | None, now: datetime
) -> None:
    """Trash (deleted_at set) or restore (None); neither is a content revision."""
    await execute(
        conn,
        "UPDATE content.entries SET deleted_at = %s, updated_at = %s,"
        " status = CASE WHEN %s::timestamptz IS NULL THEN 'draft' ELSE status END,"
        " publish_at = NULL WHERE id = %s",
        (deleted_at, now, deleted_at, entry_id),
    )


async def purge_entry(conn: Conn, entry_id: str) -> None:
    await execute(conn, "DELETE FROM content.entries WHERE id = %s", (entry_id,))


async def count_of_type(conn: Conn, type_id: str) -> int:
    """Entries of the type, trashed ones included (they still hold the type's slot)."""
    return int(
        await fetch_val(conn, "SELECT count(*) FROM content.entries WHERE type_id = %s", (type_id,))
    )


async def slugs_like(conn: Conn, type_id: str, locale: str, base: str) -> set[str]:
    rows = await fetch_all(
        conn,
        "SELECT slug FROM content.entries WHERE type_id = %s AND locale = %s"
        " AND (slug = %s OR slug LIKE %s)",
        (type_id, locale, base, base.replace("_", r"\_").replace("%", r"\%") + "-%"),
    )
    return {row["slug"] for row in rows}


async def reference_types(conn: Conn, ids: list[str]) -> dict[str, str]:
    """Live entry id -> its type name, for references being saved."""
    rows = await fetch_all(
        conn,
        f"SELECT e.id, t.name FROM {_FROM} WHERE e.id = ANY(%s) AND e.deleted_at IS NULL",
        (ids,),
    )
    return {row["id"]: row["name"] for row in rows}


async def live_slugs(conn: Conn, type_name: str, slugs: list[str]) -> set[str]:
    """Which of ``slugs`` name a live entry of ``type_name`` (visual references store slugs)."""
    rows = await fetch_all(
        conn,
        f"SELECT e.slug FROM {_FROM} WHERE t.name = %s AND e.slug = ANY(%s)"
        " AND e.deleted_at IS NULL",
        (type_name, slugs),
    )
    return {row["slug"] for row in rows}


def _escape_like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", r"\%").replace("_", r"\_")


async def list_entries(
    conn: Conn,
    *,
    trashed: bool,
    filters: EntryFilters,
    sort: tuple[str, bool],
    limit: int,
    offset: int,
) -> tuple[list[Entry], int]:
    where = ["e.deleted_at IS NOT NULL" if trashed else "e.deleted_at IS NULL"]
    params: dict[str, Any] = {"limit": limit, "offset": offset}
    if filters.status == "scheduled":
        where.append("e.status = 'draft' AND e.publish_at IS NOT NULL")
    for name, column, value in (
        ("type", "t.name", filters.type),
        ("status", "e.status", None if filters.status == "scheduled" else filters.status),
        ("author", "e.author_id", filters.author),
        ("locale", "e.locale", filters.locale),
    ):
        if value is not None:
            where.append(f"{column} = %({name})s")
            params[name] = value
    if filters.search:
        where.append("(e.title ILIKE %(search)s OR e.slug ILIKE %(search)s)")
        params["search"] = f"%{_escape_like(filters.search)}%"
    if filters.term:
        taxonomy, _, slug = filters.term.rpartition(":")
        where.append(
            "EXISTS (SELECT 1 FROM content.entry_terms et"
            " JOIN content.terms tm ON tm.id = et.term_id"
            " JOIN content.taxonomies tx ON tx.id = tm.taxonomy_id"
            " WHERE et.entry_id = e.id AND tm.slug = %(term)s"
            + (" AND tx.slug = %(taxonomy)s)" if taxonomy else ")")
        )
        params.update(term=slug, taxonomy=taxonomy)
    clause = " AND ".join(where)
    column, descending = sort
    order = f"{SORTS[column]} {'DESC' if descending else 'ASC'} NULLS LAST, e.id"
    rows = await fetch_all(
        conn,
        f"SELECT {_ENTRY} FROM {_FROM} WHERE {clause}"
        f" ORDER BY {order} LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )
    total = await fetch_val(conn, f"SELECT count(*) FROM {_FROM} WHERE {clause}", params)
    return [Entry.from_row(r) for r in rows], int(total)


# --- revisions ---------------------------------------------------------------


async def insert_revision(conn: Conn, entry: Entry, actor: Actor, note: str, now: datetime) -> None:
    await execute(
        conn,
        "INSERT INTO content.revisions (entry_id, number, title, slug, locale, status, data,"
        " actor, note, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            entry.id,
            entry.revision,
            entry.title,
            entry.slug,
            entry.locale,
            entry.status,
            Json(entry.data),
            Json(actor.as_json()),
            note,
            now,
        ),
    )


async def list_revisions(
    conn: Conn, entry_id: str, *, limit: int, offset: int
) -> tuple[list[Revision], int]:
    rows = await fetch_all(
        conn,
        f"SELECT {_REVISION} FROM content.revisions WHERE entry_id = %s"
        " ORDER BY number DESC LIMIT %s OFFSET %s",
        (entry_id, limit, offset),
    )
    total = await fetch_val(
        conn, "SELECT count(*) FROM content.revisions WHERE entry_id = %s", (entry_id,)
    )
    return [Revision.from_row(r) for r in rows], int(total)


async def get_revision(conn: Conn, entry_id: str, number: int) -> Revision | None:
    row = await fetch_one(
        conn,
        f"SELECT {_REVISION} FROM content.revisions WHERE entry_id = %s AND number = %s",
        (entry_id, number),
    )
    return Revision.from_optional(row)
