"""Webhook endpoints: manage, rotate, test; list events and their attempts; replay.

The signing secret (``whsec_`` + base64, Standard Webhooks) is generated here,
returned once by create and rotate, and stored sealed (``ctx.webhook_sealer``)
because every delivery signs with it; a listing shows only its first
characters. A rotation replaces it at once: the old secret signs nothing more.

Deliveries (mail/webhooks/delivery.py) run on the job queue; this module's
test and replay call the same signed POST synchronously and answer with what
the receiver said.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from common.outbound import url_problem
from common.webhooks import Outcome, generate_secret, send
from mail.billing import entitlement
from mail.context import MailContext
from mail.errors import not_found, validation_error
from mail.web.lists import ListParams
from mail.web.ownership import found
from mail.webhooks import store
from mail.webhooks.events import EVENT_TYPES, sample
from mail.webhooks.store import Attempt, Delivery, Webhook
from mta import mailstore
from mta.mailstore import Event

# Characters of the secret a listing shows ("whsec_" and four more).
HINT_CHARS = 10
MAX_DESCRIPTION = 200
USER_AGENT = "mail-webhooks/1"


def check_endpoint(ctx: MailContext, value: object) -> str:
    problem = url_problem(value, allow_private=ctx.config.webhook_allow_private)
    if problem is not None:
        raise validation_error(f"endpoint {problem}")
    return str(value)


def check_events(value: object) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(e, str) for e in value):
        raise validation_error("events must be a non-empty list of event types")
    unknown = sorted(set(value) - set(EVENT_TYPES))
    if unknown:
        raise validation_error(
            f"unknown event type {unknown[0]!r}; known: {', '.join(EVENT_TYPES)}"
        )
    # Kept in the documented order, each once.
    return [e for e in EVENT_TYPES if e in value]


async def owned(ctx: MailContext, account_id: str, webhook_id: str) -> Webhook:
    async with ctx.db.connection() as conn:
        return found(await store.get(conn, account_id, webhook_id), "webhook")


async def list_webhooks(
    ctx: MailContext, account_id: str, params: ListParams
) -> tuple[list[Webhook], int]:
    async with ctx.db.connection() as conn:
        return await store.page(conn, account_id, params)


async def create(
    ctx: MailContext,
    account_id: str,
    *,
    endpoint: str,
    events: list[str],
    description: str,
    enabled: bool,
) -> tuple[Webhook, str]:
    """The new endpoint and its secret, which is never readable again."""
    secret = generate_secret()
    async with ctx.db.transaction() as conn:
        await entitlement.require_feature(conn, account_id, "webhooks")
        await entitlement.reserve(conn, account_id, "webhooks", now=ctx.clock.now())
        webhook_id = await store.insert(
            conn,
            account_id=account_id,
            endpoint=endpoint,
            description=description,
            events=events,
            enabled=enabled,
            secret_sealed=ctx.webhook_sealer.seal(secret),
            secret_hint=secret[:HINT_CHARS],
            now=ctx.clock.now(),
        )
        row = await store.get(conn, account_id, webhook_id)
    assert row is not None
    return row, secret


async def update(
    ctx: MailContext, account_id: str, webhook_id: str, changes: dict[str, Any]
) -> Webhook:
    """``enabled: true`` also forgets the run of failures (the way back from 'failing')."""
    if "enabled" in changes:
        on = bool(changes["enabled"])
        changes = {**changes, "disabled_reason": None if on else "manual"}
        if on:
            changes.update(consecutive_failures=0, failing_since=None)
    async with ctx.db.transaction() as conn:
        row = found(await store.get(conn, account_id, webhook_id, for_update=True), "webhook")
        if "enabled" in changes and changes["enabled"] == row.enabled:
            # Switching on what is on (or off what is off) leaves the failure run as it is.
            derived = {"disabled_reason", "consecutive_failures", "failing_since"}
            changes = {k: v for k, v in changes.items() if k not in derived}
        await store.update(conn, row.id, changes, ctx.clock.now())
        updated = await store.get(conn, account_id, webhook_id)
    assert updated is not None
    return updated


async def delete(ctx: MailContext, account_id: str, webhook_id: str) -> None:
    async with ctx.db.transaction() as conn:
        if not await store.delete(conn, account_id, webhook_id):
            raise not_found("webhook")


async def rotate(ctx: MailContext, account_id: str, webhook_id: str) -> tuple[Webhook, str]:
    """A new secret, effective for the next attempt (retries of older events included)."""
    secret = generate_secret()
    async with ctx.db.transaction() as conn:
        row = found(await store.get(conn, account_id, webhook_id, for_update=True), "webhook")
        await store.update(
            conn,
            row.id,
            {
                "secret_sealed": ctx.webhook_sealer.seal(secret),
                "secret_hint": secret[:HINT_CHARS],
            },
            ctx.clock.now(),
        )
        updated = await store.get(conn, account_id, webhook_id)
    assert updated is not None
    return updated, secret


async def signed_post(ctx: MailContext, webhook: Webhook, message_id: str, body: bytes) -> Outcome:
    """One signed POST to the endpoint with its current secret."""
    async with ctx.db.connection() as conn:
        sealed = await store.sealed_secret(conn, webhook.id)
    if sealed is None:
        raise not_found("webhook")
    return await send(
        ctx.outbound,
        webhook.endpoint,
        ctx.webhook_sealer.open(sealed),
        message_id,
        body,
        int(ctx.clock.now().timestamp()),
        user_agent=USER_AGENT,
    )


async def test(ctx: MailContext, account_id: str, webhook_id: str, type_: str) -> Outcome:
    """Deliver a signed sample now; recorded nowhere and counted in no failure run."""
    webhook = await owned(ctx, account_id, webhook_id)
    body = json.dumps(sample(type_, ctx.clock.now()), separators=(",", ":")).encode()
    return await signed_post(ctx, webhook, f"msg_test_{uuid.uuid4().hex}", body)


def event_body(event: Event) -> bytes:
    """The bytes a receiver gets: the event's stored payload, the same on every attempt."""
    return json.dumps(event.payload, separators=(",", ":"), sort_keys=True).encode()


async def list_events(
    ctx: MailContext, account_id: str, params: ListParams, webhook_id: str | None = None
) -> tuple[list[Delivery], int]:
    async with ctx.db.connection() as conn:
        if webhook_id is not None:
            found(await store.get(conn, account_id, webhook_id), "webhook")
        return await store.delivery_page(conn, account_id, params, webhook_id)


async def get_event(
    ctx: MailContext, account_id: str, webhook_id: str, event_id: str
) -> tuple[Delivery, Event | None, list[Attempt]]:
    """One event as delivered to one endpoint: its payload and every attempt."""
    async with ctx.db.connection() as conn:
        delivery = found(await store.delivery_of(conn, account_id, webhook_id, event_id), "event")
        event = await mailstore.get_event(conn, account_id, event_id)
        attempts = await store.attempts(conn, delivery.id)
    return delivery, event, attempts
