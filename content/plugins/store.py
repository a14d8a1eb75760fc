"""SQL for content.plugins (one row per plugin seen) and content.plugin_install."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_one
from common.records import Record

_COLUMNS = (
    "name, enabled, paused, settings, version, error, error_where, error_at, created_at, updated_at"
)


@dataclass(frozen=True)
class PluginRow(Record):
    """A row of content.plugins: the state that survives restarts."""

    name: str
    enabled: bool
    paused: bool
    # Only the values an admin set (free-form JSON, checked against the declaration).
    settings: dict[str, Any]
    version: str
    error: str | None
    error_where: str | None
    error_at: datetime | None
    created_at: datetime
    updated_at: datetime


async def all_rows(conn: Conn) -> list[PluginRow]:
    rows = await fetch_all(conn, f"SELECT {_COLUMNS} FROM content.plugins ORDER BY name")
    return [PluginRow.from_row(r) for r in rows]


async def get(conn: Conn, name: str, *, lock: bool = False) -> PluginRow | None:
    suffix = " FOR UPDATE" if lock else ""
    row = await fetch_one(
        conn, f"SELECT {_COLUMNS} FROM content.plugins WHERE name = %s{suffix}", (name,)
    )
    return PluginRow.from_optional(row)


async def running(conn: Conn) -> list[PluginRow]:
    """Enabled and not paused: the plugins whose hooks, routes and surfaces are live."""
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM content.plugins WHERE enabled AND NOT paused ORDER BY name",
    )
    return [PluginRow.from_row(r) for r in rows]


async def seen(conn: Conn, name: str, version: str, error: str | None, now: datetime) -> None:
    """At start: the plugin exists (and loaded, or failed with ``error``).

    A successful load clears a previous load error; a hook error stays until
    the plugin is enabled again.
    """
    await execute(
        conn,
        "INSERT INTO content.plugins (name, version, created_at, updated_at)"
        " VALUES (%s, %s, %s, %s) ON CONFLICT (name) DO NOTHING",
        (name, version, now, now),
    )
    if error is not None:
        await execute(
            conn,
            "UPDATE content.plugins SET error = %s, error_where = 'load', error_at = %s"
            " WHERE name = %s",
            (error, now, name),
        )
        return
    await execute(
        conn,
        "UPDATE content.plugins SET version = %s,"
        " error = CASE WHEN error_where = 'load' THEN NULL ELSE error END,"
        " error_at = CASE WHEN error_where = 'load' THEN NULL ELSE error_at END,"
        " error_where = CASE WHEN error_where = 'load' THEN NULL ELSE error_where END"
        " WHERE name = %s",
        (version, name),
    )


async def claim_install(conn: Conn, names: Sequence[str], now: datetime) -> bool:
    """True for the one start that finds the site fresh (every later start: False)."""
    inserted = await execute(
        conn,
        "INSERT INTO content.plugin_install (id, autoenabled, installed_at)"
        " VALUES (true, %s, %s) ON CONFLICT (id) DO NOTHING",
        (list(names), now),
    )
    return inserted == 1


async def set_state(
    conn: Conn,
    name: str,
    now: datetime,
    *,
    enabled: bool | None = None,
    settings: dict[str, Any] | None = None,
) -> None:
    """Enable (which also resumes and clears the error), disable, or replace settings."""
    sets = ["updated_at = %(now)s"]
    if enabled is not None:
        sets.append("enabled = %(enabled)s")
        if enabled:
            sets += ["paused = false", "error = NULL", "error_where = NULL", "error_at = NULL"]
    if settings is not None:
        sets.append("settings = %(settings)s")
    await execute(
        conn,
        f"UPDATE content.plugins SET {', '.join(sets)} WHERE name = %(name)s",
        {"name": name, "now": now, "enabled": enabled, "settings": Json(settings or {})},
    )


async def pause(conn: Conn, name: str, where: str, error: str, now: datetime) -> bool:
    """Pause a running plugin after an error; False when it was not running any more."""
    changed = await execute(
        conn,
        "UPDATE content.plugins SET paused = true, error = %s, error_where = %s, error_at = %s,"
        " updated_at = %s WHERE name = %s AND enabled AND NOT paused",
        (error, where, now, now, name),
    )
    return changed == 1


async def record_error(conn: Conn, name: str, where: str, error: str, now: datetime) -> None:
    """Keep an error on the record without stopping the plugin (a route that raised)."""
    await execute(
        conn,
        "UPDATE content.plugins SET error = %s, error_where = %s, error_at = %s WHERE name = %s",
        (error, where, now, name),
    )
