"""HTTP routes of filters: list, create, validate, read, update, delete.

``/api/filters/validate`` is declared before ``/api/filters/{filter_id}`` so the
literal wins (and a GET on it is 405, never "filter validate not found").
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import boolean, integer, obj, operation, string
from common.web import json_response
from mail.auth import sessions
from mail.context import mail_context
from mail.errors import MailError, missing_required_field
from mail.filters import serializers, service
from mail.openapi import LIST, list_query
from mail.web.body import optional_bool, read_body
from mail.web.lists import Sorts, list_envelope, parse_list_params
from mail.web.ownership import parse_id
from mta.mailstore import FILTER_SORTS, MAX_SCRIPT_BYTES

routes = web.RouteTableDef()

SORTS = Sorts(columns=FILTER_SORTS, default="position", default_direction="asc", tiebreak="f.id")
FILTER_FIELDS = {
    "address_id": string(fmt="uuid"),
    "name": string(min_length=1, max_length=service.MAX_NAME),
    "script": string(min_length=1, max_length=MAX_SCRIPT_BYTES),
    "enabled": boolean(nullable=True),
    "position": integer(minimum=0, maximum=service.MAX_POSITION, nullable=True),
}
FIELDS = set(FILTER_FIELDS)


@routes.get("/api/filters")
@operation(
    response=LIST,
    query={**list_query(SORTS), "address_id": string(description="an address id; empty for all")},
    auth="session",
)
async def list_filters(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    params = parse_list_params(request.query, SORTS)
    address_id = request.query.get("address_id")
    rows, total = await service.list_filters(ctx, auth.account, params, address_id)
    return json_response(list_envelope([serializers.filter_(r) for r in rows], params, total))


@routes.post("/api/filters")
@operation(
    status=201,
    body=obj(FILTER_FIELDS, required=["address_id", "name", "script"]),
    auth="session",
    # 402: the plan lacks filters (mail/billing/).
    errors=[402],
)
async def create_filter(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    body = await read_body(request, allowed=FIELDS)
    if body.get("address_id") is None:
        raise missing_required_field("address_id")
    name = service.name_field(body, required=True)
    script = service.script_field(body, required=True)
    assert name is not None and script is not None
    service.compile_or_400(script)
    enabled = optional_bool(body, "enabled")
    position = service.position_field(body)
    row = await service.create(
        ctx,
        auth.account,
        raw_address_id=body["address_id"],
        name=name,
        script=script,
        enabled=enabled,
        position=position,
    )
    return json_response(serializers.filter_(row), status=201)


@routes.post("/api/filters/validate")
@operation(
    body=obj({"script": string(min_length=1, max_length=MAX_SCRIPT_BYTES)}, required=["script"]),
    auth="session",
)
async def validate_filter(request: web.Request) -> web.Response:
    sessions.require(request)
    body = await read_body(request, allowed={"script"})
    script = service.script_field(body, required=True)
    assert script is not None
    compiled = service.compile_or_400(script)
    return json_response(serializers.validation(compiled.extensions))


@routes.get("/api/filters/validate")
@routes.patch("/api/filters/validate")
@routes.delete("/api/filters/validate")
@operation(status=405, auth="session")
async def validate_wrong_method(request: web.Request) -> web.Response:
    # Without these the {filter_id} routes would take "validate" for an id.
    raise MailError(
        "method_not_allowed", "use POST to validate a script", headers={"Allow": "POST"}
    )


@routes.get("/api/filters/{filter_id}")
@operation(auth="session")
async def read_filter(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    row = await service.get(ctx, auth.account, parse_id(request, "filter_id"))
    return json_response(serializers.filter_(row))


@routes.patch("/api/filters/{filter_id}")
@operation(body=obj(FILTER_FIELDS), auth="session")
async def update_filter(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    filter_id = parse_id(request, "filter_id")
    body = await read_body(request, allowed=FIELDS)
    fields: dict[str, object] = {}
    name = service.name_field(body, required=False)
    if name is not None:
        fields["name"] = name
    script = service.script_field(body, required=False)
    if script is not None:
        service.compile_or_400(script)
        fields["script"] = script
    enabled = optional_bool(body, "enabled")
    if enabled is not None:
        fields["enabled"] = enabled
    position = service.position_field(body)
    if position is not None:
        fields["position"] = position
    row = await service.update(ctx, auth.account, filter_id, fields, body.get("address_id"))
    return json_response(serializers.filter_(row))


@routes.delete("/api/filters/{filter_id}")
@operation(status=204, auth="session")
async def delete_filter(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    filter_id = parse_id(request, "filter_id")
    await service.delete(ctx, auth.account, filter_id)
    return web.Response(status=204)
