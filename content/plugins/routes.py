"""/api/plugins (plugins.manage): list, read, enable, disable and configure.

Enabling (``PATCH {enabled: true}``) also needs ``plugins.install``, which no
key holds (spec, Authentication rule 5). The plugins' own routes live under
``/api/plugins/<name>/...`` (content/plugins/service.py).
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import array, boolean, obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.http import read_body
from content.plugins import service
from content.plugins.service import Plugins

routes = web.RouteTableDef()

# The registry of the service object that built the app (content/service.py).
PLUGINS = web.AppKey("content_plugins", Plugins)

PLUGIN_BODY = obj(
    {"enabled": boolean(), "settings": {"type": "object"}},
)
_PLUGIN_FIELDS = {
    "name": string(),
    "label": string(),
    "description": string(),
    "version": string(),
    "enabled": boolean(),
    "status": string(enum=("active", "inactive", "paused", "failed", "missing")),
    "settings": {"type": "object"},
    "settingsSchema": array({"type": "object"}),
    "hooks": array(string()),
    "routes": array(
        obj(
            {"method": string(), "path": string(), "permission": string(nullable=True)},
            required=["method", "path", "permission"],
        )
    ),
    "surfaces": array(string()),
    "error": {
        "anyOf": [
            obj(
                {"message": string(), "where": string(), "at": string()},
                required=["message", "where", "at"],
            ),
            {"type": "null"},
        ]
    },
    "createdAt": string(),
    "updatedAt": string(),
}
PLUGIN = obj(_PLUGIN_FIELDS, required=list(_PLUGIN_FIELDS))


@routes.get("/api/plugins")
@admin_route("plugins.manage")
@operation(auth="admin", response=obj({"data": array(PLUGIN)}, required=["data"]))
async def list_plugins(request: web.Request, principal: Principal) -> web.Response:
    """Every plugin this site has seen, with its state, settings and last error."""
    rows = await service.list_plugins(context(request), request.app[PLUGINS])
    return json_response({"data": rows})


@routes.get("/api/plugins/{name}")
@admin_route("plugins.manage")
@operation(auth="admin", response=PLUGIN)
async def get_plugin(request: web.Request, principal: Principal) -> web.Response:
    plugins = request.app[PLUGINS]
    return json_response(
        await service.get_plugin(context(request), plugins, request.match_info["name"])
    )


@routes.patch("/api/plugins/{name}")
@admin_route("plugins.manage")
@operation(auth="admin", body=PLUGIN_BODY, response=PLUGIN, errors=(409,))
async def update_plugin(request: web.Request, principal: Principal) -> web.Response:
    """Enable or disable a plugin, or change its settings (only the keys it declares)."""
    body = await read_body(request)
    plugins = request.app[PLUGINS]
    row = await service.update_plugin(
        context(request), plugins, principal, request.match_info["name"], body
    )
    return json_response(row)
