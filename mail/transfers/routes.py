"""HTTP routes of transfers: list, start, destinations, read, cancel.

``/api/transfers/destinations`` is declared before ``/api/transfers/{transfer_id}``
(the literal wins either way: mail/README.md, "Routing").
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import integer, obj, operation, string
from common.web import json_response
from mail.auth import sessions
from mail.context import mail_context
from mail.errors import missing_required_field
from mail.openapi import LIST, list_query
from mail.transfers import serializers, service
from mail.transfers.imap import TLS_MODES
from mail.transfers.store import SORTS
from mail.web.body import read_body
from mail.web.lists import list_envelope, parse_list_params
from mail.web.ownership import parse_id

routes = web.RouteTableDef()

START_FIELDS = {
    "address_id": string(fmt="uuid", description="the destination: an address of the account"),
    "host": string(min_length=1, max_length=service.MAX_HOST),
    "port": integer(minimum=1, maximum=65535, nullable=True),
    "tls": string(enum=TLS_MODES, nullable=True, description="default implicit (port 993)"),
    "username": string(min_length=1, max_length=service.MAX_USERNAME),
    "password": string(min_length=1, max_length=service.MAX_PASSWORD),
}


@routes.get("/api/transfers")
@operation(response=LIST, query=list_query(SORTS), auth="session")
async def list_transfers(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    params = parse_list_params(request.query, SORTS)
    rows, total = await service.list_transfers(ctx, auth.account, params)
    return json_response(list_envelope([serializers.transfer(r) for r in rows], params, total))


@routes.post("/api/transfers")
@operation(
    status=201,
    body=obj(START_FIELDS, required=["address_id", "host", "username", "password"]),
    response=serializers.TRANSFER,
    errors=(402, 404, 409),
    auth="session",
)
async def start_transfer(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    body = await read_body(request, allowed=set(START_FIELDS))
    if body.get("address_id") is None:
        raise missing_required_field("address_id")
    source = service.parse_source(ctx, body)
    row = await service.create(ctx, auth.account, body["address_id"], source)
    return json_response(serializers.transfer(row), status=201)


@routes.get("/api/transfers/destinations")
@operation(response=serializers.DESTINATIONS, auth="session")
async def transfer_destinations(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    rows = await service.destinations(ctx, auth.account)
    return json_response(serializers.destinations(rows))


@routes.get("/api/transfers/{transfer_id}")
@operation(response=serializers.TRANSFER, errors=(404,), auth="session")
async def read_transfer(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    row = await service.get(ctx, auth.account, parse_id(request, "transfer_id"))
    return json_response(serializers.transfer(row))


@routes.delete("/api/transfers/{transfer_id}")
@operation(response=serializers.TRANSFER, errors=(404, 409), auth="session")
async def cancel_transfer(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    row = await service.cancel(ctx, auth.account, parse_id(request, "transfer_id"))
    return json_response(serializers.transfer(row))
