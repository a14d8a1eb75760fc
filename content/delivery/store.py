"""The SQL delivery reads: published entries only, never trashed ones."""

from __future__ import annotations

from common.db import Conn, fetch_all, fetch_one
from content.entries.store import SELECT_ENTRY, Entry

# What a delivery key may see of an entry row, whatever else the query asks.
_LIVE = "e.deleted_at IS NULL AND e.status = 'published'"


async def published_by_slug(
    conn: Conn, type_name: str, slug: str, locale: str | None
) -> Entry | None:
    """One published entry; without a locale, the default locale's first, then any."""
    params: tuple[str, ...] = (type_name, slug)
    where = ""
    if locale is not None:
        where, params = "AND e.locale = %s", (*params, locale)
    row = await fetch_one(
        conn,
        f"{SELECT_ENTRY} WHERE t.name = %s AND e.slug = %s AND {_LIVE} {where}"
        " ORDER BY e.locale <> 'en', e.locale LIMIT 1",
        params,
    )
    return Entry.from_optional(row)


async def published_single(conn: Conn, type_name: str) -> Entry | None:
    row = await fetch_one(
        conn,
        f"{SELECT_ENTRY} WHERE t.name = %s AND t.single AND {_LIVE} ORDER BY e.created_at LIMIT 1",
        (type_name,),
    )
    return Entry.from_optional(row)


async def published_entries(conn: Conn, ids: list[str]) -> dict[str, Entry]:
    """The published, live entries among ``ids``, in one query (reference expansion)."""
    if not ids:
        return {}
    rows = await fetch_all(conn, f"{SELECT_ENTRY} WHERE e.id = ANY(%s) AND {_LIVE}", (ids,))
    return {row["id"]: Entry.from_row(row) for row in rows}


async def author_names(conn: Conn, ids: list[str]) -> dict[str, str]:
    """User id -> display name, for include=author (no email: delivery is public)."""
    if not ids:
        return {}
    rows = await fetch_all(conn, "SELECT id, name FROM content.users WHERE id = ANY(%s)", (ids,))
    return {row["id"]: row["name"] for row in rows}
