"""The plugin interface: what a module in PLUGIN_DIR exposes (docs/content.md, "Plugins").

A plugin is a module (``PLUGIN_DIR/gallery.py``) or a package
(``PLUGIN_DIR/gallery/__init__.py``) with a module-level ``plugin`` that is a
:class:`Plugin`::

    from content.plugins import HookEvent, Plugin, PluginContext, Route, Setting

    async def published(event: HookEvent, ctx: PluginContext) -> None:
        ctx.log.info("%s went live", event.data["slug"])

    plugin = Plugin(
        name="gallery",
        version="1.0.0",
        settings=[Setting("columns", "integer", default=3, minimum=1, maximum=6)],
        hooks={"entry.published": published},
        routes=[Route("GET", "/albums", albums)],     # GET /api/plugins/gallery/albums
        surfaces=[Surface("frame", "Gallery frame", [Property("border", "color")])],
    )

Hooks run after the change has committed, off the request, each with a
timeout; one that raises or times out pauses its plugin (WordPress's paused
plugin) and never fails the change. Routes answer only while the plugin is
active.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from common.clock import Clock
from common.db import Database
from common.openapi import Operation
from content.auth.principal import Principal
from content.design.surfaces import Surface
from content.settings import PLUGIN_NAME_RE

NAME_RE = PLUGIN_NAME_RE
SETTING_KEY_RE = re.compile(r"^[a-z][A-Za-z0-9]{0,62}$")
SETTING_TYPES = ("string", "integer", "number", "boolean", "select", "color")
ROUTE_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
ROUTE_PATH_RE = re.compile(
    r"^/(?:[A-Za-z0-9._~-]+|\{[a-z][A-Za-z0-9]*\})?(?:/(?:[A-Za-z0-9._~-]+|\{[a-z][A-Za-z0-9]*\}))*$"
)


@dataclass(frozen=True)
class Setting:
    """A declared setting: its key, type and default (checked when the plugin loads).

    ``string`` (at most ``max_length`` characters), ``integer`` and ``number``
    (within ``minimum``/``maximum`` when given), ``boolean``, ``select`` (one of
    ``options``) and ``color`` (a hex colour).
    """

    key: str
    type: str
    default: Any = None
    label: str = ""
    description: str = ""
    options: Sequence[str] = ()
    minimum: float | None = None
    maximum: float | None = None
    max_length: int = 1000


@dataclass(frozen=True)
class HookEvent:
    """A committed change: its name and what the change notification names.

    ``data`` holds, for entries, ``id, slug, type, status`` and ``was`` (the
    status before); for a menu ``menu``; for site settings ``settings``; for
    a design surface ``design``. It never holds content: read it if needed.
    """

    name: str
    data: Mapping[str, Any]


@dataclass(frozen=True)
class PluginContext:
    """What a hook or a route handler is given: its plugin's settings and the service."""

    name: str
    settings: Mapping[str, Any]
    db: Database
    clock: Clock
    log: logging.Logger
    # Who called a route (None for public routes and for hooks).
    principal: Principal | None = None


Hook = Callable[[HookEvent, PluginContext], Awaitable[None]]
RouteHandler = Callable[[web.Request, PluginContext], Awaitable[web.StreamResponse]]


@dataclass(frozen=True)
class Route:
    """A route served at ``/api/plugins/<name><path>`` while the plugin is active.

    ``permission`` is the admin API permission a caller needs (a session or
    an agent key, the CMS's own guard); ``None`` makes the route public.
    ``operation`` is its OpenAPI declaration (common/openapi.py), so the
    service's document describes it like every other route.
    """

    method: str
    path: str
    handler: RouteHandler
    permission: str | None = "content.read"
    operation: Operation | None = None


@dataclass(frozen=True)
class Plugin:
    name: str
    version: str
    label: str = ""
    description: str = ""
    settings: Sequence[Setting] = ()
    hooks: Mapping[str, Hook] = field(default_factory=dict)
    routes: Sequence[Route] = ()
    surfaces: Sequence[Surface] = ()
