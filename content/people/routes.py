"""User management under /api/users (users.manage; adding a user also needs users.create)."""

from __future__ import annotations

from aiohttp import web

from common.openapi import obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.permissions import ROLES
from content.auth.principal import Principal
from content.context import context
from content.http import page_body, paging, read_body
from content.openapi import PAGE, PAGING
from content.people import service
from content.people.serializers import user_json
from content.people.service import MAX_NAME_LENGTH, MAX_PASSWORD_LENGTH
from content.settings import MIN_PASSWORD_LENGTH

routes = web.RouteTableDef()


@routes.get("/api/users")
@admin_route("users.manage")
@operation(response=PAGE, query=PAGING, auth="admin")
async def list_users(request: web.Request, principal: Principal) -> web.Response:
    page = paging(request)
    rows, total = await service.list_users(context(request), page)
    return json_response(page_body([user_json(r) for r in rows], page, total))


@routes.post("/api/users")
@admin_route("users.manage", "users.create")
@operation(
    status=201,
    body=obj(
        {
            "email": string(min_length=1),
            "name": string(max_length=MAX_NAME_LENGTH),
            "role": string(enum=ROLES),
            "password": string(min_length=MIN_PASSWORD_LENGTH, max_length=MAX_PASSWORD_LENGTH),
        },
        required=["email", "password"],
        additional=True,
    ),
    auth="admin",
    errors=(409,),
)
async def create_user(request: web.Request, principal: Principal) -> web.Response:
    user = await service.create_user(context(request), principal, await read_body(request))
    return json_response(user_json(user), status=201)


@routes.get("/api/users/{id}")
@admin_route("users.manage")
@operation(auth="admin")
async def get_user(request: web.Request, principal: Principal) -> web.Response:
    user = await service.get_user(context(request), request.match_info["id"])
    return json_response(user_json(user))


@routes.patch("/api/users/{id}")
@admin_route("users.manage")
@operation(
    body=obj(
        {
            "email": string(min_length=1),
            "name": string(max_length=MAX_NAME_LENGTH),
            "role": string(enum=ROLES),
            "password": string(min_length=MIN_PASSWORD_LENGTH, max_length=MAX_PASSWORD_LENGTH),
        },
        additional=True,
    ),
    auth="admin",
    errors=(409,),
)
async def update_user(request: web.Request, principal: Principal) -> web.Response:
    body = await read_body(request)
    user = await service.update_user(context(request), principal, request.match_info["id"], body)
    return json_response(user_json(user))


@routes.delete("/api/users/{id}")
@admin_route("users.manage")
@operation(status=204, auth="admin", errors=(409,))
async def delete_user(request: web.Request, principal: Principal) -> web.Response:
    await service.delete_user(context(request), principal, request.match_info["id"])
    return web.Response(status=204)
