"""POST /api/entries/:id/preview (content.write and the right to edit that entry).

The token is served by the delivery API's GET /preview/:token (delivery/routes.py).
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.entries.validation import MAX_SLUG, MAX_TITLE, SLUG_RE
from content.http import read_body
from content.preview import service

routes = web.RouteTableDef()

PREVIEW_BODY = obj(
    {
        "title": string(min_length=1, max_length=MAX_TITLE),
        "slug": string(pattern=SLUG_RE.pattern, max_length=MAX_SLUG),
        "data": {"type": "object"},
    }
)
PREVIEW_LINK = obj(
    {
        "token": string(),
        "expiresAt": string(fmt="date-time"),
        "url": string(),
        "siteUrl": string(nullable=True),
    },
    required=["token", "expiresAt", "url", "siteUrl"],
)


@routes.post("/api/entries/{id}/preview")
@admin_route("content.write")
@operation(status=201, body=PREVIEW_BODY, response=PREVIEW_LINK, auth="admin")
async def create_preview(request: web.Request, principal: Principal) -> web.Response:
    """A preview link of the entry, with the body's unsaved changes; saves nothing."""
    ctx = context(request)
    body = await read_body(request)
    link = await service.create(ctx, principal, request.match_info["id"], body)
    return json_response(
        {
            "token": link.token,
            "expiresAt": link.expires_at,
            "url": link.url,
            "siteUrl": link.site_url,
        },
        status=201,
    )
