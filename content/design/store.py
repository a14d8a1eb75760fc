"""SQL for content.design_overrides: one row per overridden property of a surface."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from common.db import Conn, execute, fetch_all


async def overrides(conn: Conn, surfaces: Sequence[str] | None = None) -> dict[str, dict[str, str]]:
    """surface -> property -> value; of ``surfaces`` only, when given."""
    if surfaces is None:
        rows = await fetch_all(
            conn, "SELECT surface, property, value FROM content.design_overrides"
        )
    else:
        rows = await fetch_all(
            conn,
            "SELECT surface, property, value FROM content.design_overrides WHERE surface = ANY(%s)",
            (list(surfaces),),
        )
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        out.setdefault(row["surface"], {})[row["property"]] = row["value"]
    return out


async def lock_surface(conn: Conn, surface: str) -> dict[str, str]:
    """The surface's overrides, locked for this transaction's change."""
    # The advisory lock also covers a surface with no rows yet (two first saves).
    await execute(
        conn, "SELECT pg_advisory_xact_lock(hashtext('content.design:' || %s))", (surface,)
    )
    return (await overrides(conn, [surface])).get(surface, {})


async def set_values(conn: Conn, surface: str, values: Mapping[str, str], now: datetime) -> None:
    for prop, value in values.items():
        await execute(
            conn,
            "INSERT INTO content.design_overrides (surface, property, value, updated_at)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (surface, property)"
            " DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at",
            (surface, prop, value, now),
        )


async def remove(conn: Conn, surface: str, properties: Sequence[str]) -> None:
    await execute(
        conn,
        "DELETE FROM content.design_overrides WHERE surface = %s AND property = ANY(%s)",
        (surface, list(properties)),
    )
