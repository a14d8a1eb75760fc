"""GET /api/activity: who changed what, newest first."""

from __future__ import annotations

from aiohttp import web

from common.openapi import operation, string
from common.web import json_response
from content.activity import service
from content.activity.serializers import activity_json
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.http import page_body, paging
from content.openapi import PAGE, PAGING

routes = web.RouteTableDef()


@routes.get("/api/activity")
@admin_route("content.read")
@operation(
    response=PAGE,
    query={**PAGING, "subjectKind": string(), "subjectId": string(), "userId": string()},
    auth="admin",
)
async def list_activity(request: web.Request, principal: Principal) -> web.Response:
    page = paging(request)
    query = request.query
    rows, total = await service.list_activity(
        context(request),
        principal,
        page,
        subject_kind=query.get("subjectKind") or None,
        subject_id=query.get("subjectId") or None,
        user_id=query.get("userId") or None,
    )
    return json_response(page_body([activity_json(r) for r in rows], page, total))
