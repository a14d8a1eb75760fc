"""A local server speaking Stripe's wire format, for the billing tests.

Form-encoded requests in Stripe's bracket notation, ``Authorization: Bearer
sk_...``, JSON objects naming their ``object``, errors as
``{"error": {"type", "code", "message", "param"}}`` with Stripe's statuses.
Implements what mail/billing/stripe.py calls: customers, Checkout Sessions
(subscription and setup modes), subscriptions (read, update), payment
methods (read, attach, detach), the default payment method, invoices and
tax ids (validated per type, as Stripe does).
"""

from __future__ import annotations

import json
import re
import secrets
import time
from typing import Any

import aiohttp
import stripe
from aiohttp import web


def parse_form(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """``a[b][0][c]=v`` back into nested dicts (list indexes stay string keys)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        parts = re.findall(r"[^\[\]]+", key)
        node = out
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out


def error(
    status: int, type_: str, message: str, *, code: str | None = None, param: str | None = None
) -> web.Response:
    body = {"error": {"type": type_, "message": message, "code": code, "param": param}}
    return web.json_response(body, status=status)


FORM = web.RequestKey("form", dict)

TAX_FORMATS = {
    "eu_vat": r"[A-Z]{2}[0-9A-Z+*.]{2,13}",
    "gb_vat": r"GB[0-9]{9}([0-9]{3})?",
    "us_ein": r"[0-9]{2}-[0-9]{7}",
}


class StripeStandIn:
    def __init__(self, key: str) -> None:
        self.key = key
        self.base_url = ""
        self.customers: dict[str, dict[str, Any]] = {}
        self.sessions: dict[str, dict[str, Any]] = {}
        self.subscriptions: dict[str, dict[str, Any]] = {}
        self.methods: dict[str, dict[str, Any]] = {}
        self.invoices: dict[str, dict[str, Any]] = {}
        self.tax_ids: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str, dict[str, Any], dict[str, str]]] = []
        # The hosted checkout: Stripe's address by default; the browser test serves
        # it here (GET /pay/:id completes the session, sends the signed events to
        # webhook_url as Stripe would, and redirects to success_url).
        self.hosted_base = "https://checkout.stripe.com/c/pay"
        self.webhook_url = ""
        self.webhook_secret = ""

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{secrets.token_hex(8)}"

    def add_card(self, brand: str = "visa", last4: str = "4242") -> str:
        pm_id = self._id("pm")
        self.methods[pm_id] = {
            "id": pm_id,
            "object": "payment_method",
            "type": "card",
            "customer": None,
            "card": {"brand": brand, "last4": last4, "exp_month": 12, "exp_year": 2030},
            "created": int(time.time()),
        }
        return pm_id

    def add_subscription(
        self, customer: str, price: str, metadata: dict[str, str], period_end: int
    ) -> dict[str, Any]:
        sub_id = self._id("sub")
        sub = {
            "id": sub_id,
            "object": "subscription",
            "customer": customer,
            "status": "active",
            "cancel_at_period_end": False,
            "metadata": metadata,
            "current_period_start": period_end - 30 * 86400,
            "current_period_end": period_end,
            "items": {
                "object": "list",
                "data": [
                    {"object": "subscription_item", "price": {"id": price, "object": "price"}}
                ],
            },
        }
        self.subscriptions[sub_id] = sub
        return sub

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._auth])
        r = app.router
        r.add_post("/v1/customers", self.create_customer)
        r.add_post("/v1/customers/{id}", self.update_customer)
        r.add_post("/v1/checkout/sessions", self.create_session)
        r.add_get("/v1/checkout/sessions/{id}", self.get_session)
        r.add_get("/v1/subscriptions/{id}", self.get_subscription)
        r.add_post("/v1/subscriptions/{id}", self.update_subscription)
        r.add_get("/v1/payment_methods/{id}", self.get_method)
        r.add_post("/v1/payment_methods/{id}/attach", self.attach)
        r.add_post("/v1/payment_methods/{id}/detach", self.detach)
        r.add_get("/v1/invoices", self.list_invoices)
        r.add_post("/v1/customers/{id}/tax_ids", self.create_tax_id)
        r.add_delete("/v1/customers/{id}/tax_ids/{tax}", self.delete_tax_id)
        r.add_get("/pay/{id}", self.pay)
        return app

    @web.middleware
    async def _auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path.startswith("/pay/"):  # the hosted page: a person's browser, no key
            return await handler(request)
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return error(401, "invalid_request_error", "Invalid API Key provided")
        form = (
            parse_form(list((await request.post()).items()))
            if request.method == "POST"
            else parse_form(list(request.query.items()))
        )
        request[FORM] = form
        self.requests.append((request.method, request.path, form, dict(request.headers)))
        return await handler(request)

    def _missing(self, what: str, id_: str) -> web.Response:
        return error(
            404,
            "invalid_request_error",
            f"No such {what}: '{id_}'",
            code="resource_missing",
            param="id",
        )

    async def create_customer(self, request: web.Request) -> web.Response:
        form = request[FORM]
        cid = self._id("cus")
        self.customers[cid] = {
            "id": cid,
            "object": "customer",
            "email": form.get("email"),
            "metadata": form.get("metadata", {}),
            "invoice_settings": {"default_payment_method": None},
        }
        return web.json_response(self.customers[cid])

    async def update_customer(self, request: web.Request) -> web.Response:
        cid = request.match_info["id"]
        if cid not in self.customers:
            return self._missing("customer", cid)
        pm = request[FORM].get("invoice_settings", {}).get("default_payment_method")
        if pm is not None:
            if pm not in self.methods or self.methods[pm]["customer"] != cid:
                return error(
                    400,
                    "invalid_request_error",
                    f"No such PaymentMethod: '{pm}'",
                    code="resource_missing",
                    param="invoice_settings[default_payment_method]",
                )
            self.customers[cid]["invoice_settings"]["default_payment_method"] = pm
        return web.json_response(self.customers[cid])

    async def create_session(self, request: web.Request) -> web.Response:
        form = request[FORM]
        mode = form.get("mode")
        if mode not in ("payment", "setup", "subscription"):
            return error(400, "invalid_request_error", "Invalid mode", param="mode")
        if not form.get("success_url"):
            return error(
                400,
                "invalid_request_error",
                "Missing required param: success_url.",
                code="parameter_missing",
                param="success_url",
            )
        if mode == "subscription" and not form.get("line_items"):
            return error(
                400,
                "invalid_request_error",
                "line_items is required in subscription mode",
                param="line_items",
            )
        sid = f"cs_test_{secrets.token_hex(12)}"
        session = {
            "id": sid,
            "object": "checkout.session",
            "mode": mode,
            "customer": form.get("customer"),
            "client_reference_id": form.get("client_reference_id"),
            "metadata": form.get("metadata", {}),
            "status": "open",
            "url": f"{self.hosted_base}/{sid}",
            "success_url": form["success_url"],
            "cancel_url": form.get("cancel_url"),
            "line_items": form.get("line_items"),
            "subscription_data": form.get("subscription_data"),
        }
        self.sessions[sid] = session
        return web.json_response(session)

    async def get_session(self, request: web.Request) -> web.Response:
        sid = request.match_info["id"]
        return (
            web.json_response(self.sessions[sid])
            if sid in self.sessions
            else self._missing("checkout.session", sid)
        )

    async def get_subscription(self, request: web.Request) -> web.Response:
        sid = request.match_info["id"]
        return (
            web.json_response(self.subscriptions[sid])
            if sid in self.subscriptions
            else self._missing("subscription", sid)
        )

    async def update_subscription(self, request: web.Request) -> web.Response:
        sid = request.match_info["id"]
        if sid not in self.subscriptions:
            return self._missing("subscription", sid)
        value = request[FORM].get("cancel_at_period_end")
        if value is not None:
            self.subscriptions[sid]["cancel_at_period_end"] = value == "true"
        return web.json_response(self.subscriptions[sid])

    async def get_method(self, request: web.Request) -> web.Response:
        pid = request.match_info["id"]
        return (
            web.json_response(self.methods[pid])
            if pid in self.methods
            else self._missing("payment_method", pid)
        )

    async def attach(self, request: web.Request) -> web.Response:
        pid = request.match_info["id"]
        if pid not in self.methods:
            return self._missing("PaymentMethod", pid)
        self.methods[pid]["customer"] = request[FORM].get("customer")
        return web.json_response(self.methods[pid])

    async def detach(self, request: web.Request) -> web.Response:
        pid = request.match_info["id"]
        if pid not in self.methods or self.methods[pid]["customer"] is None:
            return self._missing("PaymentMethod", pid)
        self.methods[pid]["customer"] = None
        return web.json_response(self.methods[pid])

    async def list_invoices(self, request: web.Request) -> web.Response:
        customer = request[FORM].get("customer")
        data = [i for i in self.invoices.values() if i["customer"] == customer]
        return web.json_response(
            {"object": "list", "data": data, "has_more": False, "url": "/v1/invoices"}
        )

    async def create_tax_id(self, request: web.Request) -> web.Response:
        cid = request.match_info["id"]
        if cid not in self.customers:
            return self._missing("customer", cid)
        form = request[FORM]
        pattern = TAX_FORMATS.get(form.get("type", ""))
        if pattern is None or not re.fullmatch(pattern, form.get("value", "")):
            return error(
                400,
                "invalid_request_error",
                f"Invalid value for {form.get('type')}.",
                code="tax_id_invalid",
                param="value",
            )
        tid = self._id("txi")
        self.tax_ids[tid] = {
            "id": tid,
            "object": "tax_id",
            "customer": cid,
            "type": form["type"],
            "value": form["value"],
        }
        return web.json_response(self.tax_ids[tid])

    async def delete_tax_id(self, request: web.Request) -> web.Response:
        tid = request.match_info["tax"]
        if tid not in self.tax_ids:
            return self._missing("tax_id", tid)
        del self.tax_ids[tid]
        return web.json_response({"id": tid, "object": "tax_id", "deleted": True})

    async def pay(self, request: web.Request) -> web.StreamResponse:
        """The hosted checkout, completed at once with a test card."""
        session = self.sessions[request.match_info["id"]]
        now = int(time.time())
        session["status"] = "complete"
        events: list[tuple[str, dict[str, Any]]] = []
        if session["mode"] == "subscription":
            price = session["line_items"]["0"]["price"]
            meta = (session.get("subscription_data") or {}).get("metadata", {})
            sub = self.add_subscription(session["customer"], price, meta, now + 30 * 86400)
            session["subscription"] = sub["id"]
            events = [
                ("checkout.session.completed", session),
                ("customer.subscription.created", sub),
            ]
        else:
            pm = self.add_card()
            self.methods[pm]["customer"] = session["customer"]
            events = [
                ("checkout.session.completed", session),
                ("payment_method.attached", self.methods[pm]),
            ]
        async with aiohttp.ClientSession() as client:
            for type_, obj in events:
                payload = json.dumps(
                    {
                        "id": self._id("evt"),
                        "object": "event",
                        "type": type_,
                        "created": now,
                        "data": {"object": obj},
                    }
                )
                header = stripe.WebhookSignature.generate_signature_header(
                    payload, self.webhook_secret, timestamp=now
                )
                async with client.post(
                    self.webhook_url,
                    data=payload.encode(),
                    headers={"Stripe-Signature": header, "Content-Type": "application/json"},
                ) as resp:
                    assert resp.status == 200, await resp.text()
        raise web.HTTPSeeOther(
            session["success_url"].replace("{CHECKOUT_SESSION_ID}", session["id"])
        )
