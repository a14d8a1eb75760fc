"""A sample plugin: settings of every type, a hook, two routes and a design surface."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.openapi import Operation, integer, obj
from common.web import json_response
from content.plugins import HookEvent, Plugin, PluginContext, Property, Route, Setting, Surface

# What the hooks heard: (event, data, settings), read by the tests.
HEARD: list[tuple[str, dict[str, Any], dict[str, Any]]] = []


async def heard(event: HookEvent, ctx: PluginContext) -> None:
    HEARD.append((event.name, dict(event.data), dict(ctx.settings)))


async def albums(request: web.Request, ctx: PluginContext) -> web.Response:
    """The gallery's layout as configured."""
    assert ctx.principal is not None
    return json_response({"columns": ctx.settings["columns"], "for": ctx.principal.user.id})


async def ping(request: web.Request, ctx: PluginContext) -> web.Response:
    """A public route: no credential needed."""
    return json_response({"plugin": ctx.name, "columns": ctx.settings["columns"]})


plugin = Plugin(
    name="gallery",
    version="1.2.0",
    label="Gallery",
    description="Albums of pictures.",
    settings=[
        Setting("columns", "integer", default=3, minimum=1, maximum=6),
        Setting("caption", "string", default="", max_length=80),
        Setting("layout", "select", default="grid", options=("grid", "masonry")),
        Setting("showDates", "boolean", default=False),
        Setting("accent", "color", default="#336699"),
        Setting("ratio", "number", default=1.5, minimum=0.1),
    ],
    hooks={"entry.created": heard, "entry.published": heard},
    routes=[
        Route(
            "GET",
            "/albums",
            albums,
            permission="content.read",
            operation=Operation(
                response=obj({"columns": integer(), "for": {"type": "string"}}),
            ),
        ),
        Route("GET", "/ping", ping, permission=None),
    ],
    surfaces=[
        Surface(
            "frame",
            "Gallery frame",
            [
                Property("border", "color", label="Border", default="#222222"),
                Property("captionFont", "font", default="Georgia, serif"),
                Property("gap", "spacing", default="8px"),
            ],
            selector=".gallery",
        )
    ],
)
