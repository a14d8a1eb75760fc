"""Site settings under /api/settings (read: content.read; change: settings.manage)."""

from __future__ import annotations

from aiohttp import web

from common.openapi import obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.http import read_body
from content.site import service
from content.site.serializers import settings_json
from content.types.fields import MEDIA_ID_RE

routes = web.RouteTableDef()

_MEDIA = string(pattern=MEDIA_ID_RE.pattern, nullable=True)
SETTINGS_BODY = obj(
    {
        **{key: string(max_length=n, nullable=True) for key, (_, n) in service.TEXT_KEYS.items()},
        "logo": _MEDIA,
        "socialImage": _MEDIA,
    }
)


@routes.get("/api/settings")
@admin_route("content.read")
@operation(auth="admin")
async def get_settings(request: web.Request, principal: Principal) -> web.Response:
    return json_response(settings_json(await service.get_settings(context(request))))


@routes.patch("/api/settings")
@admin_route("settings.manage")
@operation(body=SETTINGS_BODY, auth="admin")
async def update_settings(request: web.Request, principal: Principal) -> web.Response:
    body = await read_body(request)
    row = await service.update_settings(context(request), principal, body)
    return json_response(settings_json(row))
