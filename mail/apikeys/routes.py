"""HTTP routes of API keys: list, create (token shown once), revoke. A session only."""

from __future__ import annotations

from aiohttp import web

from common.openapi import obj, operation, string
from common.web import json_response
from mail.apikeys import serializers, service
from mail.apikeys.access import require_session
from mail.apikeys.store import SORTS
from mail.context import mail_context
from mail.openapi import LIST, list_query
from mail.web.body import read_body, required_str
from mail.web.lists import list_envelope, parse_list_params
from mail.web.ownership import parse_id

routes = web.RouteTableDef()

KEY_FIELDS = {
    "name": string(min_length=1, max_length=service.MAX_NAME),
    "permission": string(enum=service.PERMISSIONS),
    "domain_id": string(fmt="uuid", nullable=True),
}


@routes.get("/api/api-keys")
@operation(response=LIST, query=list_query(SORTS), auth="session", errors=[403])
async def list_api_keys(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    params = parse_list_params(request.query, SORTS)
    keys, total = await service.list_keys(ctx, account, params)
    return json_response(list_envelope([serializers.api_key(k) for k in keys], params, total))


@routes.post("/api/api-keys")
@operation(
    status=201, body=obj(KEY_FIELDS, required=["name"]), auth="session", errors=[402, 403, 404]
)
async def create_api_key(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    body = await read_body(request, allowed=KEY_FIELDS)
    name = service.parse_name(required_str(body, "name", max_length=service.MAX_NAME))
    permission = service.parse_permission(body.get("permission"))
    key, token = await service.create(
        ctx, account, name=name, permission=permission, domain_id=body.get("domain_id")
    )
    return json_response(serializers.created(key, token), status=201)


@routes.delete("/api/api-keys/{api_key_id}")
@operation(auth="session", errors=[403])
async def delete_api_key(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    key_id = parse_id(request, "api_key_id", "api key")
    await service.revoke(ctx, account, key_id)
    return json_response(serializers.deleted(key_id))
