"""HTTP routes of webhooks: endpoints, rotate, test, events, replay.

``/api/webhooks/events`` is declared before ``/api/webhooks/{webhook_id}`` so
the literal wins (and another verb on it is 405, never "webhook not found").
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.openapi import array, boolean, obj, operation, string
from common.outbound import MAX_URL
from common.web import json_response
from mail.auth import sessions
from mail.context import mail_context
from mail.errors import MailError, missing_required_field, validation_error
from mail.openapi import LIST, list_query
from mail.web.body import optional_bool, optional_str, read_body
from mail.web.lists import list_envelope, parse_list_params
from mail.web.ownership import parse_id
from mail.webhooks import delivery, serializers, service, store
from mail.webhooks.events import EVENT_TYPES

routes = web.RouteTableDef()

FIELDS = {
    "endpoint": string(min_length=1, max_length=MAX_URL),
    "events": array(string(enum=EVENT_TYPES), max_items=len(EVENT_TYPES)),
    "description": string(max_length=service.MAX_DESCRIPTION, nullable=True),
    "enabled": boolean(nullable=True),
}


def _changes(request: web.Request, body: dict[str, Any]) -> dict[str, Any]:
    ctx = mail_context(request)
    changes: dict[str, Any] = {}
    if body.get("endpoint") is not None:
        changes["endpoint"] = service.check_endpoint(ctx, body["endpoint"])
    if body.get("events") is not None:
        changes["events"] = service.check_events(body["events"])
    description = optional_str(body, "description", max_length=service.MAX_DESCRIPTION)
    if description is not None:
        changes["description"] = description.strip()
    enabled = optional_bool(body, "enabled")
    if enabled is not None:
        changes["enabled"] = enabled
    return changes


@routes.get("/api/webhooks")
@operation(response=LIST, query=list_query(store.WEBHOOK_SORTS), auth="session")
async def list_webhooks(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    params = parse_list_params(request.query, store.WEBHOOK_SORTS)
    rows, total = await service.list_webhooks(ctx, account.id, params)
    return json_response(list_envelope([serializers.webhook(r) for r in rows], params, total))


@routes.post("/api/webhooks")
@operation(status=201, body=obj(FIELDS, required=["endpoint"]), auth="session", errors=[402])
async def create_webhook(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    body = await read_body(request, allowed=set(FIELDS))
    if body.get("endpoint") in (None, ""):
        raise missing_required_field("endpoint")
    changes = _changes(request, body)
    row, secret = await service.create(
        ctx,
        account.id,
        endpoint=changes["endpoint"],
        # Omitted: every type, as a new endpoint usually wants to see what exists.
        events=changes.get("events", list(EVENT_TYPES)),
        description=changes.get("description", ""),
        enabled=changes.get("enabled", True),
    )
    return json_response(serializers.with_secret(row, secret), status=201)


@routes.get("/api/webhooks/events")
@operation(response=LIST, query=list_query(store.DELIVERY_SORTS), auth="session")
async def list_all_events(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    params = parse_list_params(request.query, store.DELIVERY_SORTS)
    rows, total = await service.list_events(ctx, account.id, params)
    return json_response(list_envelope([serializers.event(r) for r in rows], params, total))


@routes.patch("/api/webhooks/events")
@routes.delete("/api/webhooks/events")
@operation(status=405, auth="session")
async def events_wrong_method(request: web.Request) -> web.Response:
    # Without this the {webhook_id} routes would take "events" for an id.
    raise MailError("method_not_allowed", "events are read with GET", headers={"Allow": "GET"})


@routes.get("/api/webhooks/{webhook_id}")
@operation(auth="session")
async def read_webhook(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    row = await service.owned(ctx, account.id, parse_id(request, "webhook_id"))
    return json_response(serializers.webhook(row))


@routes.patch("/api/webhooks/{webhook_id}")
@operation(body=obj(FIELDS), auth="session")
async def update_webhook(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    webhook_id = parse_id(request, "webhook_id")
    body = await read_body(request, allowed=set(FIELDS))
    if "endpoint" in body and body["endpoint"] is None:
        raise validation_error("endpoint cannot be removed")
    row = await service.update(ctx, account.id, webhook_id, _changes(request, body))
    return json_response(serializers.webhook(row))


@routes.delete("/api/webhooks/{webhook_id}")
@operation(status=204, auth="session")
async def delete_webhook(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    await service.delete(ctx, account.id, parse_id(request, "webhook_id"))
    return web.Response(status=204)


@routes.post("/api/webhooks/{webhook_id}/rotate")
@operation(body=obj({}), auth="session")
async def rotate_secret(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    webhook_id = parse_id(request, "webhook_id")
    await read_body(request, allowed=())
    row, secret = await service.rotate(ctx, account.id, webhook_id)
    return json_response(serializers.with_secret(row, secret))


@routes.post("/api/webhooks/{webhook_id}/test")
@operation(body=obj({"type": string(enum=EVENT_TYPES, nullable=True)}), auth="session")
async def test_webhook(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    webhook_id = parse_id(request, "webhook_id")
    body = await read_body(request, allowed={"type"})
    type_ = optional_str(body, "type", max_length=100) or "email.sent"
    if type_ not in EVENT_TYPES:
        raise validation_error(f"unknown event type {type_!r}")
    outcome = await service.test(ctx, account.id, webhook_id, type_)
    return json_response(serializers.test_result(type_, outcome))


@routes.get("/api/webhooks/{webhook_id}/events")
@operation(response=LIST, query=list_query(store.DELIVERY_SORTS), auth="session")
async def list_events(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    webhook_id = parse_id(request, "webhook_id")
    params = parse_list_params(request.query, store.DELIVERY_SORTS)
    rows, total = await service.list_events(ctx, account.id, params, webhook_id)
    return json_response(list_envelope([serializers.event(r) for r in rows], params, total))


@routes.get("/api/webhooks/{webhook_id}/events/{event_id}")
@operation(auth="session")
async def read_event(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    found = await service.get_event(
        ctx, account.id, parse_id(request, "webhook_id"), parse_id(request, "event_id")
    )
    return json_response(serializers.event_detail(*found))


@routes.post("/api/webhooks/{webhook_id}/events/{event_id}/replay")
@operation(body=obj({}), auth="session")
async def replay_event(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    webhook_id = parse_id(request, "webhook_id")
    event_id = parse_id(request, "event_id")
    await read_body(request, allowed=())
    found = await delivery.replay(ctx, account.id, webhook_id, event_id)
    return json_response(serializers.event_detail(*found))
