"""Stripe through its documented HTTP API (https://docs.stripe.com/api).

Requests are form-encoded with Stripe's bracket notation (``metadata[plan]``,
``line_items[0][price]``), authenticated with the secret key as a Bearer
token; every POST carries an Idempotency-Key so a retried call is one call at
Stripe. Answers are JSON objects naming their ``object``; errors are
``{"error": {"type", "code", "message", "param"}}``. STRIPE_API_BASE points the
client elsewhere (the tests' stand-in, tests/mail/stripe_standin.py).
"""

from __future__ import annotations

import uuid
from typing import Any

import aiohttp

from mail.billing.settings import BillingSettings

API_VERSION = "2024-06-20"


class StripeError(Exception):
    def __init__(self, status: int, error: dict[str, Any]) -> None:
        super().__init__(str(error.get("message") or "Stripe error"))
        self.status = status
        self.type = str(error.get("type") or "api_error")
        self.code = error.get("code")
        self.param = error.get("param")
        self.message = str(error.get("message") or "Stripe error")


def encode(params: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Stripe's form encoding of nested dicts and lists."""
    out: list[tuple[str, str]] = []
    for key, value in params.items():
        name = f"{prefix}[{key}]" if prefix else str(key)
        if value is None:
            continue
        if isinstance(value, dict):
            out.extend(encode(value, name))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    out.extend(encode(item, f"{name}[{i}]"))
                else:
                    out.append((f"{name}[{i}]", _scalar(item)))
        else:
            out.append((name, _scalar(value)))
    return out


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Stripe:
    def __init__(self, settings: BillingSettings) -> None:
        self.base = settings.stripe_api_base
        self.key = settings.stripe_secret_key
        self.timeout = aiohttp.ClientTimeout(total=settings.stripe_timeout_seconds)

    async def call(
        self, method: str, path: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.key}", "Stripe-Version": API_VERSION}
        data = None
        query = None
        if method == "POST":
            # Stripe honours idempotency keys on POST only.
            headers["Idempotency-Key"] = str(uuid.uuid4())
            data = encode(params or {})
        else:
            query = encode(params or {})
        async with (
            aiohttp.ClientSession(timeout=self.timeout) as session,
            session.request(
                method, f"{self.base}/v1/{path}", params=query, data=data, headers=headers
            ) as resp,
        ):
            body = await resp.json(content_type=None)
        if resp.status >= 400 or not isinstance(body, dict) or "error" in body:
            error = body.get("error") if isinstance(body, dict) else None
            raise StripeError(resp.status, error if isinstance(error, dict) else {})
        return body

    # --- the calls billing makes --------------------------------------------

    async def create_customer(self, email: str, account_id: str) -> dict[str, Any]:
        return await self.call(
            "POST", "customers", {"email": email, "metadata": {"account_id": account_id}}
        )

    async def checkout_session(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self.call("POST", "checkout/sessions", params)

    async def get_subscription(self, subscription_id: str) -> dict[str, Any]:
        return await self.call("GET", f"subscriptions/{subscription_id}")

    async def update_subscription(
        self, subscription_id: str, params: dict[str, Any]
    ) -> dict[str, Any]:
        return await self.call("POST", f"subscriptions/{subscription_id}", params)

    async def get_payment_method(self, method_id: str) -> dict[str, Any]:
        return await self.call("GET", f"payment_methods/{method_id}")

    async def attach_payment_method(self, method_id: str, customer: str) -> dict[str, Any]:
        return await self.call(
            "POST", f"payment_methods/{method_id}/attach", {"customer": customer}
        )

    async def detach_payment_method(self, method_id: str) -> dict[str, Any]:
        return await self.call("POST", f"payment_methods/{method_id}/detach")

    async def set_default_payment_method(self, customer: str, method_id: str) -> dict[str, Any]:
        return await self.call(
            "POST",
            f"customers/{customer}",
            {"invoice_settings": {"default_payment_method": method_id}},
        )

    async def list_invoices(self, customer: str) -> list[dict[str, Any]]:
        page = await self.call("GET", "invoices", {"customer": customer, "limit": 100})
        return list(page.get("data") or [])

    async def create_tax_id(self, customer: str, type_: str, value: str) -> dict[str, Any]:
        return await self.call(
            "POST", f"customers/{customer}/tax_ids", {"type": type_, "value": value}
        )

    async def delete_tax_id(self, customer: str, tax_id: str) -> dict[str, Any]:
        return await self.call("DELETE", f"customers/{customer}/tax_ids/{tax_id}")
