"""HTTP routes of suppressions: list, add by hand, remove. A session only."""

from __future__ import annotations

from aiohttp import web

from common.openapi import obj, operation, string
from common.web import json_response
from mail.apikeys.access import require_session
from mail.context import mail_context
from mail.openapi import LIST, list_query
from mail.suppressions import serializers, service
from mail.web.body import read_body, required_str
from mail.web.lists import Sorts, list_envelope, parse_list_params
from mail.web.ownership import parse_id
from mta.mailstore import SUPPRESSION_SORTS

routes = web.RouteTableDef()

SORTS = Sorts(columns=SUPPRESSION_SORTS, default="created_at", tiebreak="id")
FIELDS = {"email": string(min_length=1, max_length=254)}


@routes.get("/api/suppressions")
@operation(response=LIST, query=list_query(SORTS), auth="session", errors=[403])
async def list_suppressions(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    params = parse_list_params(request.query, SORTS)
    rows, total = await service.list_suppressions(ctx, account, params)
    return json_response(list_envelope([serializers.suppression(r) for r in rows], params, total))


@routes.post("/api/suppressions")
@operation(status=201, body=obj(FIELDS, required=["email"]), auth="session", errors=[403, 409])
async def add_suppression(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    body = await read_body(request, allowed=FIELDS)
    row = await service.add(ctx, account, required_str(body, "email", max_length=254))
    return json_response(serializers.suppression(row), status=201)


@routes.delete("/api/suppressions/{suppression_id}")
@operation(auth="session", errors=[403])
async def delete_suppression(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    suppression_id = parse_id(request, "suppression_id")
    await service.remove(ctx, account, suppression_id)
    return json_response(serializers.deleted(suppression_id))
