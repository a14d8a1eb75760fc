"""Plugins at run time: the registry of one process, their state, hooks and routes.

:class:`Plugins` holds what :mod:`content.plugins.loader` found when the
service was built. Their state lives in ``content.plugins`` (enabled,
paused, settings, last error), so it survives restarts and is shared by
every process; each process reads it when it needs it (a hook to run, a
route to answer, the design catalogue), so a plugin enabled on one process
is live on all of them at once.

- **Start** (:meth:`Plugins.start`): every plugin found gets its record, a
  load failure is recorded on it; the first start of a site (the one that
  claims ``content.plugin_install``) enables PLUGIN_AUTOENABLE.
- **Hooks** run after the change has committed (this process's own commits
  only, so a change runs each hook once in the whole deployment), off the
  request, at most :data:`HOOK_CONCURRENCY` at a time, each within
  :data:`HOOK_TIMEOUT_SECONDS`. A hook that raises or times out pauses its
  plugin: the error is recorded on the record, logged and written to
  Activity; the other plugins keep running and the change stands.
- **Routes** answer at ``/api/plugins/<name>/...`` only while the plugin is
  active (enabled, loaded, not paused); otherwise 404.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from aiohttp import web

from common.db import Conn
from common.openapi import ATTRIBUTE, Operation
from content.auth.credentials import admin_route, require
from content.auth.principal import Actor, Principal
from content.context import Context
from content.design.surfaces import Surface
from content.errors import Conflict, ContentError, NotFound, Problems
from content.plugins import store
from content.plugins.interface import HookEvent, Plugin, PluginContext, Route
from content.plugins.loader import Loaded, LoadFailure, check_setting, load_plugins
from content.plugins.store import PluginRow
from content.social.plans import POST_HOOK_EVENTS
from content.webhooks.events import ENTRY_EVENTS, events_of
from content.writes import write

log = logging.getLogger(__name__)

HOOK_EVENTS: tuple[str, ...] = (
    *ENTRY_EVENTS,
    "menu.created",
    "menu.updated",
    "menu.deleted",
    "settings.updated",
    "design.updated",
    # A social plan mirrors its core post (content/social/plans.py).
    *POST_HOOK_EVENTS,
)
HOOK_TIMEOUT_SECONDS = 10.0
HOOK_CONCURRENCY = 4
# Changes waiting for their hooks in this process. Beyond this the hooks of a
# change are skipped (and logged) rather than letting memory grow without end
# behind a slow plugin.
MAX_PENDING_HOOKS = 1000
ROUTE_PREFIX = "/api/plugins"
# Who the activity log names for what the service did on its own.
AUTOENABLE_ACTOR = Actor(kind="system", name="PLUGIN_AUTOENABLE")
ISOLATION_ACTOR = Actor(kind="system", name="plugin isolation")


def effective_settings(plugin: Plugin, stored: Mapping[str, Any]) -> dict[str, Any]:
    """Declared defaults, overlaid with the stored values the declaration still accepts."""
    out = {}
    for setting in plugin.settings:
        value = setting.default
        if setting.key in stored:
            clean, problem = check_setting(setting, stored[setting.key])
            if problem is None:
                value = clean
        out[setting.key] = value
    return out


class Plugins:
    """The plugins of one service object: loaded once, state read from the database."""

    def __init__(
        self,
        ctx: Context,
        directory: Path | None,
        given: Sequence[Plugin] = (),
        *,
        hook_timeout: float = HOOK_TIMEOUT_SECONDS,
    ) -> None:
        self.ctx = ctx
        self.loaded: dict[str, Loaded]
        self.failed: dict[str, LoadFailure]
        self.loaded, self.failed = load_plugins(directory, given, HOOK_EVENTS)
        self.hook_timeout = hook_timeout
        self._slots = asyncio.Semaphore(HOOK_CONCURRENCY)
        self._tasks: set[asyncio.Task[None]] = set()
        self._running: tuple[int, dict[str, dict[str, Any]]] | None = None

    # --- start ---

    async def start(self, autoenable: Sequence[str]) -> None:
        """Record every plugin found; on a fresh install, enable PLUGIN_AUTOENABLE."""
        async with write(self.ctx) as tx:
            for name, loaded in self.loaded.items():
                await store.seen(tx.conn, name, loaded.plugin.version, None, tx.now)
            for name, failure in self.failed.items():
                await store.seen(tx.conn, name, "", failure.error, tx.now)
            if not await store.claim_install(tx.conn, autoenable, tx.now):
                return
            for name in autoenable:
                if name not in self.loaded:
                    why = "failed to load" if name in self.failed else "is not in PLUGIN_DIR"
                    log.warning("PLUGIN_AUTOENABLE names %s, which %s; left disabled", name, why)
                    continue
                await store.set_state(tx.conn, name, tx.now, enabled=True)
                await tx.record(
                    AUTOENABLE_ACTOR,
                    "plugin.enabled",
                    "plugin",
                    name,
                    {"autoenable": True},
                    notify={"plugin": name},
                )

    # --- hooks ---

    def on_commit(self, event: dict[str, Any]) -> None:
        """A change this process committed: run the hooks on it, after the fact."""
        # The same events webhooks and the socket get: an entry created
        # already published is entry.created, then entry.published.
        for name in events_of(event):
            self._hook(name, event)

    def _hook(self, name: str, event: dict[str, Any]) -> None:
        if name not in HOOK_EVENTS or not any(
            name in loaded.plugin.hooks for loaded in self.loaded.values()
        ):
            return
        data = {k: v for k, v in event.items() if k not in ("event", "origin")}
        if len(self._tasks) >= MAX_PENDING_HOOKS:
            log.error(
                "plugin hooks are %d changes behind; %s %s skipped", len(self._tasks), name, data
            )
            return
        task = asyncio.get_running_loop().create_task(self._run_hooks(HookEvent(name, data)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def idle(self) -> None:
        """Wait for the hooks already started (tests, and a graceful stop)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        """At shutdown: let running hooks finish within their timeout, then cancel them."""
        try:
            await asyncio.wait_for(self.idle(), self.hook_timeout)
        except TimeoutError:
            for task in list(self._tasks):
                task.cancel()
            await self.idle()

    async def _run_hooks(self, event: HookEvent) -> None:
        async with self._slots:
            try:
                running = await self.running()
            except Exception:
                log.exception("reading plugin state for %s hooks failed", event.name)
                return
            runs = [
                self._run_hook(self.loaded[name], stored, event)
                for name, stored in running.items()
                if name in self.loaded and event.name in self.loaded[name].plugin.hooks
            ]
            await asyncio.gather(*runs)

    async def _run_hook(self, loaded: Loaded, stored: Mapping[str, Any], event: HookEvent) -> None:
        plugin = loaded.plugin
        hook = plugin.hooks[event.name]
        try:
            await asyncio.wait_for(
                hook(event, self.plugin_context(plugin, stored)), self.hook_timeout
            )
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            await self.pause(
                plugin.name, f"hook:{event.name}", f"timed out after {self.hook_timeout:g} s"
            )
        except Exception as exc:
            log.exception("plugin %s: its %s hook raised", plugin.name, event.name)
            await self.pause(plugin.name, f"hook:{event.name}", f"{type(exc).__name__}: {exc}")

    async def pause(self, name: str, where: str, error: str) -> None:
        """Stop a plugin after an error until an admin enables it again."""
        log.error("plugin %s paused: %s: %s", name, where, error)
        try:
            async with write(self.ctx) as tx:
                if await store.pause(tx.conn, name, where, error[:2000], tx.now):
                    await tx.record(
                        ISOLATION_ACTOR,
                        "plugin.paused",
                        "plugin",
                        name,
                        {"where": where, "error": error[:500]},
                        notify={"plugin": name},
                    )
        except Exception:
            log.exception("recording the pause of plugin %s failed", name)

    def plugin_context(
        self, plugin: Plugin, stored: Mapping[str, Any], principal: Principal | None = None
    ) -> PluginContext:
        return PluginContext(
            name=plugin.name,
            settings=effective_settings(plugin, stored),
            db=self.ctx.db,
            clock=self.ctx.clock,
            log=logging.getLogger(f"content.plugins.{plugin.name}"),
            principal=principal,
        )

    # --- routes and surfaces ---

    def add_routes(self, app: web.Application) -> None:
        for name, loaded in self.loaded.items():
            for route in loaded.plugin.routes:
                app.router.add_route(
                    route.method, f"{ROUTE_PREFIX}/{name}{route.path}", self._handler(loaded, route)
                )

    def _handler(self, loaded: Loaded, route: Route) -> Any:
        plugin = loaded.plugin

        async def serve(request: web.Request, principal: Principal | None) -> web.StreamResponse:
            stored = (await self.running()).get(plugin.name)
            if stored is None:
                raise NotFound(f"no route {request.method} {request.path}")
            try:
                return await route.handler(request, self.plugin_context(plugin, stored, principal))
            except (ContentError, web.HTTPException):
                raise
            except Exception as exc:
                log.exception(
                    "plugin %s: route %s %s raised", plugin.name, route.method, route.path
                )
                await self.record_error(
                    plugin.name,
                    f"route:{route.method} {route.path}",
                    f"{type(exc).__name__}: {exc}",
                )
                raise ContentError(
                    500, "PLUGIN_FAILED", f"the {plugin.name} plugin failed; see its record"
                ) from None

        op = route.operation or Operation()
        if route.permission is not None:
            op = replace(op, auth="admin")
        doc = (getattr(route.handler, "__doc__", None) or "").strip()

        async def guarded(request: web.Request, principal: Principal) -> web.StreamResponse:
            return await serve(request, principal)

        async def public(request: web.Request) -> web.StreamResponse:
            return await serve(request, None)

        inner: Any = guarded if route.permission is not None else public
        inner.__name__ = (
            f"plugin_{plugin.name.replace('-', '_')}_{getattr(route.handler, '__name__', 'route')}"
        )
        inner.__doc__ = (
            f"{plugin.label or plugin.name} plugin: {doc or route.method + ' ' + route.path}"
        )
        setattr(inner, ATTRIBUTE, op)
        if route.permission is None:
            return inner
        return admin_route(route.permission)(inner)

    async def record_error(self, name: str, where: str, error: str) -> None:
        """An error kept on the record (and in the log) that does not stop the plugin."""
        try:
            async with self.ctx.db.connection() as conn:
                await store.record_error(conn, name, where, error[:2000], self.ctx.clock.now())
        except Exception:
            log.exception("recording the error of plugin %s failed", name)

    async def active_surfaces(self, conn: Conn) -> list[Surface]:
        """The design surfaces of the running plugins (content/design/service.py)."""
        if not any(loaded.surfaces for loaded in self.loaded.values()):
            return []
        running = await self.running(conn)
        return [s for name in running if name in self.loaded for s in self.loaded[name].surfaces]

    async def running(self, conn: Conn | None = None) -> dict[str, dict[str, Any]]:
        """name -> stored settings of the running plugins (enabled, not paused).

        Kept per content version: every change of a plugin's state notifies
        (``plugin``), so the version moves in every process when it commits
        and the next call reads the table again (the delivery cache's rule:
        an answer read while the version moved is not kept).
        """
        version = self.ctx.changes.version()
        if self._running is not None and self._running[0] == version:
            return self._running[1]
        if conn is None:
            async with self.ctx.db.connection() as own:
                rows = await store.running(own)
        else:
            rows = await store.running(conn)
        running = {row.name: row.settings for row in rows}
        if self.ctx.changes.version() == version:
            self._running = (version, running)
        return running


# --- the admin API ------------------------------------------------------------


def status(row: PluginRow, plugins: Plugins) -> str:
    """active, inactive, paused, failed (did not load) or missing (no longer found)."""
    if row.name in plugins.failed:
        return "failed"
    if row.name not in plugins.loaded:
        return "missing"
    if not row.enabled:
        return "inactive"
    return "paused" if row.paused else "active"


def plugin_json(row: PluginRow, plugins: Plugins) -> dict[str, Any]:
    loaded = plugins.loaded.get(row.name)
    plugin = loaded.plugin if loaded else None
    return {
        "name": row.name,
        "label": (plugin.label or plugin.name) if plugin else row.name,
        "description": plugin.description if plugin else "",
        "version": row.version,
        "enabled": row.enabled,
        "status": status(row, plugins),
        "settings": effective_settings(plugin, row.settings) if plugin else dict(row.settings),
        "settingsSchema": [
            {
                "key": s.key,
                "type": s.type,
                "label": s.label or s.key,
                "description": s.description,
                "default": s.default,
                **({"options": list(s.options)} if s.type == "select" else {}),
                **({"minimum": s.minimum} if s.minimum is not None else {}),
                **({"maximum": s.maximum} if s.maximum is not None else {}),
                **({"maxLength": s.max_length} if s.type == "string" else {}),
            }
            for s in (plugin.settings if plugin else ())
        ],
        "hooks": sorted(plugin.hooks) if plugin else [],
        "routes": [
            {
                "method": r.method,
                "path": f"{ROUTE_PREFIX}/{row.name}{r.path}",
                "permission": r.permission,
            }
            for r in (plugin.routes if plugin else ())
        ],
        "surfaces": [s.id for s in loaded.surfaces] if loaded else [],
        "error": (
            {"message": row.error, "where": row.error_where, "at": row.error_at}
            if row.error
            else None
        ),
        "createdAt": row.created_at,
        "updatedAt": row.updated_at,
    }


async def list_plugins(ctx: Context, plugins: Plugins) -> list[dict[str, Any]]:
    async with ctx.db.connection() as conn:
        rows = await store.all_rows(conn)
    return [plugin_json(row, plugins) for row in rows]


async def get_plugin(ctx: Context, plugins: Plugins, name: str) -> dict[str, Any]:
    async with ctx.db.connection() as conn:
        row = await store.get(conn, name)
    if row is None:
        raise NotFound(f"no plugin named {name!r}")
    return plugin_json(row, plugins)


def _clean_settings(
    plugin: Plugin, stored: Mapping[str, Any], given: Mapping[str, Any], p: Problems
) -> dict[str, Any]:
    """The stored values with ``given`` applied (``null`` restores a default)."""
    declared = {s.key: s for s in plugin.settings}
    out = {k: v for k, v in stored.items() if k in declared}
    for key in sorted(given):
        setting = declared.get(key)
        if setting is None:
            p.add(f"settings.{key}", f"is not a setting of the {plugin.name} plugin")
            continue
        if given[key] is None:
            out.pop(key, None)
            continue
        value, problem = check_setting(setting, given[key])
        if problem is not None:
            p.add(f"settings.{key}", f"{problem} ({setting.type})")
        else:
            out[key] = value
    return out


async def update_plugin(
    ctx: Context, plugins: Plugins, actor: Principal, name: str, body: dict[str, Any]
) -> dict[str, Any]:
    """PATCH: ``enabled`` (true counts as installing) and ``settings`` (declared keys only)."""
    p = Problems()
    for key in sorted(set(body) - {"enabled", "settings"}):
        p.add(key, "is not a plugin field; send enabled or settings")
    enabled = body.get("enabled")
    if "enabled" in body and not isinstance(enabled, bool):
        p.add("enabled", "must be true or false")
    given = body.get("settings")
    if "settings" in body and not isinstance(given, dict):
        p.add("settings", "must be an object of setting keys and values")
    p.raise_if_any()
    if enabled is True:
        # Spec, Authentication rule 5: no key installs a plugin (KEY_FORBIDDEN).
        require(actor, "plugins.install")
    async with write(ctx) as tx:
        row = await store.get(tx.conn, name, lock=True)
        if row is None:
            raise NotFound(f"no plugin named {name!r}")
        loaded = plugins.loaded.get(name)
        if loaded is None and (enabled is True or given is not None):
            why = (
                plugins.failed[name].error
                if name in plugins.failed
                else "it is no longer in PLUGIN_DIR"
            )
            raise Conflict(f"the {name} plugin is not loaded: {why}", "PLUGIN_UNAVAILABLE")
        if given is not None and loaded is not None:
            settings = _clean_settings(loaded.plugin, row.settings, given, p)
            p.raise_if_any()
            if settings != row.settings:
                await store.set_state(tx.conn, name, tx.now, settings=settings)
                keys = sorted(
                    k for k in {*settings, *row.settings} if settings.get(k) != row.settings.get(k)
                )
                summary = {
                    "settings": keys,
                    "before": {k: row.settings[k] for k in keys if k in row.settings},
                    "after": {k: settings[k] for k in keys if k in settings},
                }
                await tx.record(
                    actor.actor(),
                    "plugin.updated",
                    "plugin",
                    name,
                    summary,
                    notify={"plugin": name},
                )
        if enabled is True and (not row.enabled or row.paused):
            await store.set_state(tx.conn, name, tx.now, enabled=True)
            resumed: dict[str, Any] = {"resumed": True, "error": row.error} if row.paused else {}
            await tx.record(
                actor.actor(), "plugin.enabled", "plugin", name, resumed, notify={"plugin": name}
            )
        elif enabled is False and row.enabled:
            await store.set_state(tx.conn, name, tx.now, enabled=False)
            await tx.record(
                actor.actor(), "plugin.disabled", "plugin", name, {}, notify={"plugin": name}
            )
        row = await store.get(tx.conn, name)
    assert row is not None
    return plugin_json(row, plugins)
