"""Design surfaces: the declared catalogue, overrides (settings.manage) and delivery.

The host declares surfaces when it creates the service (``design_surfaces``)
and every active plugin may declare its own; :class:`Catalogue` is the list
of both, read per request because a plugin's surfaces come and go with it.
An override is validated by its property's type (surfaces.py), saved in one
write with its activity record and change notification (so the content
version moves and delivery caches empty), and removed by saving ``null``.
Overrides of a surface that is not declared right now (a plugin disabled)
are kept, not delivered, and come back with it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from common.db import Conn
from content.auth.principal import Principal
from content.context import Context
from content.design import store
from content.design.surfaces import Surface, check_value, css
from content.errors import NotFound, Problems
from content.writes import write

PluginSurfaces = Callable[[Conn], Awaitable[list[Surface]]]


async def _none(conn: Conn) -> list[Surface]:
    return []


class Catalogue:
    """The declared surfaces: the host's, then those of each active plugin."""

    def __init__(self, host: Sequence[Surface], plugins: PluginSurfaces = _none) -> None:
        self.host = tuple(host)
        self._plugins = plugins

    async def surfaces(self, conn: Conn) -> list[Surface]:
        return [*self.host, *(await self._plugins(conn))]

    async def surface(self, conn: Conn, surface_id: str) -> Surface:
        for surface in await self.surfaces(conn):
            if surface.id == surface_id:
                return surface
        raise NotFound(f"no design surface is declared as {surface_id!r}")


def _valid(surface: Surface, stored: dict[str, str]) -> dict[str, str]:
    """The stored overrides still valid for the surface as declared now.

    A plugin update may drop a property or change its type or options; an
    override it no longer accepts is kept in the table but not used.
    """
    out = {}
    for prop in surface.properties:
        if prop.key in stored and check_value(prop, stored[prop.key])[1] is None:
            out[prop.key] = stored[prop.key]
    return out


def surface_json(surface: Surface, stored: dict[str, str]) -> dict[str, Any]:
    values = _valid(surface, stored)
    return {
        "id": surface.id,
        "label": surface.label,
        "description": surface.description,
        "selector": surface.selector,
        "source": surface.source,
        "properties": [
            {
                "key": p.key,
                "type": p.type,
                "label": p.label or p.key,
                "description": p.description,
                "default": p.default,
                "options": list(p.options),
                # The override, or null when the default applies.
                "value": values.get(p.key),
                "effective": values.get(p.key, p.default),
            }
            for p in surface.properties
        ],
    }


async def get_design(ctx: Context, catalogue: Catalogue) -> list[dict[str, Any]]:
    async with ctx.db.connection() as conn:
        surfaces = await catalogue.surfaces(conn)
        values = await store.overrides(conn, [s.id for s in surfaces])
    return [surface_json(s, values.get(s.id, {})) for s in surfaces]


def _clean(surface: Surface, body: dict[str, Any]) -> dict[str, str | None]:
    """property -> clean value, or None to remove its override; every bad key named."""
    props = {p.key: p for p in surface.properties}
    p = Problems()
    out: dict[str, str | None] = {}
    for key in sorted(body):
        prop = props.get(key)
        if prop is None:
            p.add(key, f"is not a property of the {surface.id} surface")
            continue
        if body[key] is None:
            out[key] = None
            continue
        value, problem = check_value(prop, body[key])
        if problem is not None:
            p.add(key, problem)
        else:
            out[key] = value
    p.raise_if_any()
    return out


async def change_surface(
    ctx: Context,
    catalogue: Catalogue,
    actor: Principal,
    surface_id: str,
    body: dict[str, Any],
    *,
    reset: bool = False,
) -> dict[str, Any]:
    """Set the properties ``body`` names (``null`` removes an override); ``reset`` removes all."""
    async with write(ctx) as tx:
        surface = await catalogue.surface(tx.conn, surface_id)
        wanted = {p.key: None for p in surface.properties} if reset else _clean(surface, body)
        before = await store.lock_surface(tx.conn, surface.id)
        changed = {k: v for k, v in wanted.items() if v is not None and before.get(k) != v}
        removed = sorted(k for k, v in wanted.items() if v is None and k in before)
        if changed or removed:
            await store.set_values(tx.conn, surface.id, changed, tx.now)
            await store.remove(tx.conn, surface.id, removed)
            summary = {
                "set": changed,
                "removed": removed,
                "before": {k: before[k] for k in (*changed, *removed) if k in before},
            }
            await tx.record(
                actor.actor(),
                "design.updated",
                "design",
                surface.id,
                summary,
                notify={"design": surface.id},
            )
        values = await store.overrides(tx.conn, [surface.id])
    return surface_json(surface, values.get(surface.id, {}))


async def delivered(conn: Conn, catalogue: Catalogue) -> dict[str, Any]:
    """What GET /site/design serves: effective values per surface, and them as CSS."""
    surfaces = await catalogue.surfaces(conn)
    values = await store.overrides(conn, [s.id for s in surfaces])
    effective: list[tuple[Surface, dict[str, str]]] = []
    for surface in surfaces:
        mine = _valid(surface, values.get(surface.id, {}))
        props = {}
        for prop in surface.properties:
            value = mine.get(prop.key, prop.default)
            if value is not None:
                props[prop.key] = value
        effective.append((surface, props))
    return {
        "surfaces": {s.id: {"selector": s.selector, "values": v} for s, v in effective},
        "css": css(effective),
    }
