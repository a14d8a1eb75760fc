"""HTTP routes of billing (the spec's Billing table and the payment webhook). A session only."""

from __future__ import annotations

from aiohttp import web

from common.openapi import array, boolean, integer, obj, operation, string
from common.web import json_response
from mail.apikeys.access import require_session
from mail.billing import serializers, service, webhook
from mail.billing.store import TRANSACTION_SORTS
from mail.context import mail_context
from mail.openapi import LIST, list_query
from mail.web.body import read_body, required_str
from mail.web.lists import list_envelope, parse_list_params
from mail.web.ownership import parse_id

routes = web.RouteTableDef()

PLAN_BODY = {"plan_id": string(min_length=1, max_length=40)}
METHOD_BODY = {"payment_method_id": string(min_length=1, max_length=255)}
# Plans and payment methods are few: the whole list, not pages.
WHOLE_LIST = obj(
    {"object": {"const": "list"}, "data": array({"type": "object"})}, required=["object", "data"]
)
# Stripe's event envelope (docs.stripe.com/api/events/object); read only once the signature holds.
STRIPE_EVENT = obj(
    {
        "id": string(),
        "object": string(),
        "type": string(),
        "created": integer(),
        "livemode": boolean(),
        "api_version": string(nullable=True),
        "pending_webhooks": integer(),
        "data": {"type": "object"},
        "request": {"type": ["object", "null"]},
    },
    required=["id", "type", "data"],
)
TAX_BODY = {
    "type": string(enum=sorted(service.TAX_ID_FORMATS)),
    "value": string(min_length=1, max_length=64),
}


@routes.get("/api/plans")
@operation(response=WHOLE_LIST, auth="session", errors=[403])
async def list_plans(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    require_session(request)
    plans = await service.plans(ctx)
    data = [serializers.plan(p) for p in plans]
    return json_response({"object": "list", "data": data})


@routes.get("/api/entitlement")
@operation(auth="session", errors=[403])
async def get_entitlement(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    ent, row = await service.current(ctx, account.id)
    return json_response(serializers.entitlement(ent, row))


@routes.post("/api/subscription")
@operation(body=obj(PLAN_BODY, required=["plan_id"]), auth="session", errors=[403, 404, 409])
async def subscribe(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    body = await read_body(request, allowed=PLAN_BODY)
    answer = await service.subscribe(ctx, account, required_str(body, "plan_id", max_length=40))
    return json_response(answer)


@routes.post("/api/subscription/cancel")
@operation(auth="session", errors=[403, 409])
async def cancel_subscription(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    row = await service.cancel(ctx, account)
    return json_response(serializers.subscription(row))


@routes.get("/api/billing/provider")
@operation(auth="session", errors=[403])
async def billing_provider(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    require_session(request)
    return json_response({"object": "billing_provider", "provider": service.provider(ctx)})


@routes.post("/api/billing/checkout/subscription")
@operation(body=obj(PLAN_BODY, required=["plan_id"]), auth="session", errors=[403, 404, 502])
async def checkout_subscription(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    body = await read_body(request, allowed=PLAN_BODY)
    plan_id = required_str(body, "plan_id", max_length=40)
    answer = await service.checkout_subscription(ctx, account, plan_id)
    return json_response({"object": "checkout_session", **answer})


@routes.post("/api/billing/checkout/setup")
@operation(auth="session", errors=[403, 502])
async def checkout_setup(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    answer = await service.checkout_setup(ctx, account)
    return json_response({"object": "checkout_session", **answer})


@routes.get("/api/billing/payment-methods")
@operation(response=WHOLE_LIST, auth="session", errors=[403])
async def list_payment_methods(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    methods = await service.methods(ctx, account)
    return json_response(
        {"object": "list", "data": [serializers.payment_method(m) for m in methods]}
    )


@routes.post("/api/billing/payment-methods")
@operation(
    status=201,
    body=obj(METHOD_BODY, required=["payment_method_id"]),
    auth="session",
    errors=[403, 502],
)
async def record_payment_method(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    body = await read_body(request, allowed=METHOD_BODY)
    provider_id = required_str(body, "payment_method_id", max_length=255)
    method = await service.record_method(ctx, account, provider_id)
    return json_response(serializers.payment_method(method), status=201)


@routes.post("/api/billing/payment-methods/{method_id}/default")
@operation(auth="session", errors=[403, 502])
async def default_payment_method(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    method_id = parse_id(request, "method_id", "payment method")
    method = await service.default_method(ctx, account, method_id)
    return json_response(serializers.payment_method(method))


@routes.delete("/api/billing/payment-methods/{method_id}")
@operation(auth="session", errors=[403, 502])
async def delete_payment_method(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    method_id = parse_id(request, "method_id", "payment method")
    await service.remove_method(ctx, account, method_id)
    return json_response({"object": "payment_method", "id": method_id, "deleted": True})


@routes.get("/api/billing/transactions")
@operation(response=LIST, query=list_query(TRANSACTION_SORTS), auth="session", errors=[403])
async def list_transactions(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    params = parse_list_params(request.query, TRANSACTION_SORTS)
    items, total = await service.list_transactions(ctx, account, params)
    return json_response(
        list_envelope([serializers.transaction_object(t) for t in items], params, total)
    )


@routes.get("/api/billing/transactions/{transaction_id}")
@operation(auth="session", errors=[403])
async def get_transaction(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    transaction_id = parse_id(request, "transaction_id", "transaction")
    found = await service.read_transaction(ctx, account, transaction_id)
    return json_response(serializers.transaction_object(found))


@routes.get("/api/billing/tax-id")
@operation(auth="session", errors=[403])
async def get_tax_id(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    return json_response(serializers.tax_id(await service.tax_id(ctx, account)))


@routes.put("/api/billing/tax-id")
@operation(body=obj(TAX_BODY, required=["type", "value"]), auth="session", errors=[403, 502])
async def put_tax_id(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = require_session(request)
    body = await read_body(request, allowed=TAX_BODY)
    type_ = required_str(body, "type", max_length=16)
    value = required_str(body, "value", max_length=64)
    row = await service.set_tax_id(ctx, account, type_, value)
    return json_response(serializers.tax_id(row))


@routes.post("/api/webhooks/payments")
@operation(body=STRIPE_EVENT, errors=[400])
async def payment_webhook(request: web.Request) -> web.Response:
    """Stripe's events: authenticated by Stripe-Signature over the raw body, not by a session."""
    ctx = mail_context(request)
    # The bytes exactly as sent: the signature covers them, not a re-serialisation.
    body = await request.read()
    answer = await webhook.receive(ctx, body, request.headers.get("Stripe-Signature"))
    return json_response(answer)
