"""GET /api/activity: who changed what, newest first."""

from __future__ import annotations

from aiohttp import web

from common.openapi import operation, string
from common.web import json_response
from content.activity import store
from content.activity.serializers import activity_json
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.http import page_body, paging
from content.openapi import PAGE, PAGING

routes = web.RouteTableDef()

# What anyone who reads content may see; the rest (people, keys) needs users.manage.
CONTENT_SUBJECTS = ["entry", "type", "taxonomy", "term", "menu", "settings", "design"]


@routes.get("/api/activity")
@admin_route("content.read")
@operation(
    response=PAGE,
    query={**PAGING, "subjectKind": string(), "subjectId": string(), "userId": string()},
    auth="admin",
)
async def list_activity(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    page = paging(request)
    kinds = None if principal.can("users.manage") else CONTENT_SUBJECTS
    async with ctx.db.connection() as conn:
        rows, total = await store.list_activity(
            conn,
            kinds=kinds,
            subject_kind=request.query.get("subjectKind") or None,
            subject_id=request.query.get("subjectId") or None,
            user_id=request.query.get("userId") or None,
            limit=page.limit,
            offset=page.offset,
        )
    return json_response(page_body([activity_json(r) for r in rows], page, total))
