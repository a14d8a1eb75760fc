"""Webhooks: the rules of create, update and delete, and the delivery job.

The signing secret (``whsec_``, Standard Webhooks) is generated here, shown
once in the create answer, and stored sealed (common/crypto.py, purpose
``content.webhook``) because each delivery must sign with it; listings show
only its first characters. Deliveries run on the job queue: the job opens the
secret, signs the body fixed when the event happened (common/webhooks.py),
posts it through the SSRF-safe client (common/outbound.py), records the
attempt, and fails on anything but a 2xx so the queue retries with backoff.
"""

from __future__ import annotations

from typing import Any

from common import metrics
from common.crypto import Sealer
from common.ids import short_id
from common.jobs import Job
from common.outbound import OutboundClient, url_problem
from common.webhooks import generate_secret, send
from content.auth.credentials import require
from content.auth.principal import Principal
from content.context import Context
from content.errors import NotFound, Problems
from content.http import Paging
from content.webhooks import store
from content.webhooks.events import EVENTS
from content.webhooks.store import Attempt, Webhook, WebhookChanges
from content.writes import write

SEAL_PURPOSE = "content.webhook"
# Characters of the secret a listing shows ("whsec_" and four more).
HINT_CHARS = 10
KEYS = {"name", "url", "events", "enabled"}


class DeliveryFailed(Exception):
    """A non-2xx answer or no answer: the job queue retries with backoff."""


def sealer(ctx: Context) -> Sealer:
    return Sealer(ctx.runtime.settings.secret, SEAL_PURPOSE)


def _check_url(value: Any, p: Problems, allow_private: bool) -> str | None:
    problem = url_problem(value, allow_private=allow_private)
    if problem is not None:
        p.add("url", problem)
        return None
    return str(value)


def _check(
    body: dict[str, Any], p: Problems, allow_private: bool, *, creating: bool
) -> WebhookChanges:
    for key in sorted(set(body) - KEYS):
        p.add(key, "is not a webhook property")
    changes: WebhookChanges = {}
    if creating or "name" in body:
        name = body.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 100:
            p.add("name", "must be a non-empty string of at most 100 characters")
        else:
            changes["name"] = name.strip()
    if creating or "url" in body:
        url = _check_url(body.get("url"), p, allow_private)
        if url is not None:
            changes["url"] = url
    if "events" in body:
        events = body["events"]
        if not isinstance(events, list) or any(e not in EVENTS for e in events):
            p.add("events", f"must be a list of {', '.join(EVENTS)} (empty: all of them)")
        else:
            changes["events"] = sorted(set(events))
    if "enabled" in body:
        if not isinstance(body["enabled"], bool):
            p.add("enabled", "must be true or false")
        else:
            changes["enabled"] = body["enabled"]
    return changes


async def list_webhooks(ctx: Context, actor: Principal) -> list[Webhook]:
    require(actor, "webhooks.manage")
    async with ctx.db.connection() as conn:
        return await store.list_webhooks(conn)


async def get_webhook(ctx: Context, actor: Principal, webhook_id: str) -> Webhook:
    require(actor, "webhooks.manage")
    async with ctx.db.connection() as conn:
        row = await store.get_webhook(conn, webhook_id)
    if row is None:
        raise NotFound("no such webhook")
    return row


async def list_attempts(
    ctx: Context, actor: Principal, webhook_id: str, paging: Paging
) -> tuple[list[Attempt], int]:
    """One page of a webhook's delivery attempts (newest first) and their number."""
    require(actor, "webhooks.manage")
    async with ctx.db.connection() as conn:
        if await store.get_webhook(conn, webhook_id) is None:
            raise NotFound("no such webhook")
        return await store.list_attempts(conn, webhook_id, limit=paging.limit, offset=paging.offset)


async def create_webhook(
    ctx: Context, actor: Principal, body: dict[str, Any]
) -> tuple[Webhook, str]:
    require(actor, "webhooks.manage")
    p = Problems()
    values = _check(body, p, ctx.config.webhook_allow_private, creating=True)
    p.raise_if_any()
    secret = generate_secret()
    async with write(ctx) as tx:
        row = await store.insert_webhook(
            tx.conn,
            short_id(),
            name=values["name"],
            url=values["url"],
            events=values.get("events", []),
            enabled=values.get("enabled", True),
            secret_sealed=sealer(ctx).seal(secret),
            secret_hint=secret[:HINT_CHARS],
            now=tx.now,
        )
        await tx.record(actor.actor(), "webhook.created", "webhook", row.id, {"name": row.name})
    return row, secret


async def update_webhook(
    ctx: Context, actor: Principal, webhook_id: str, body: dict[str, Any]
) -> Webhook:
    require(actor, "webhooks.manage")
    p = Problems()
    changes = _check(body, p, ctx.config.webhook_allow_private, creating=False)
    p.raise_if_any()
    async with write(ctx) as tx:
        row = await store.update_webhook(tx.conn, webhook_id, changes, tx.now)
        if row is None:
            raise NotFound("no such webhook")
        summary = {"name": row.name, "fields": sorted(changes)}
        await tx.record(actor.actor(), "webhook.updated", "webhook", row.id, summary)
    return row


async def delete_webhook(ctx: Context, actor: Principal, webhook_id: str) -> None:
    require(actor, "webhooks.manage")
    async with write(ctx) as tx:
        row = await store.get_webhook(tx.conn, webhook_id, lock=True)
        if row is None or not await store.delete_webhook(tx.conn, webhook_id):
            raise NotFound("no such webhook")
        await tx.record(actor.actor(), "webhook.deleted", "webhook", row.id, {"name": row.name})


def delivery_handler(ctx: Context, client: OutboundClient) -> Any:
    """The job handler of one delivery (one webhook, one event, every try)."""

    async def deliver(job: Job) -> None:
        webhook_id = str(job.payload["webhook"])
        async with ctx.db.connection() as conn:
            row = await store.get_webhook(conn, webhook_id)
            sealed = await store.sealed_secret(conn, webhook_id)
        if row is None or sealed is None or not row.enabled:
            return  # deleted or switched off since: nothing to send
        message_id, event = str(job.payload["message"]), str(job.payload["event"])
        body = str(job.payload["body"]).encode()
        now = ctx.clock.now()
        outcome = await send(
            client,
            row.url,
            sealer(ctx).open(sealed),
            message_id,
            body,
            int(now.timestamp()),
            user_agent="cms-webhooks/1",
        )
        metrics.webhook_attempt("content", outcome.status, outcome.ok)
        async with ctx.db.connection() as conn:
            await store.record_attempt(
                conn,
                webhook_id,
                message_id=message_id,
                event=event,
                attempt=job.attempts,
                at=now,
                status=outcome.status,
                ok=outcome.ok,
                error=outcome.error,
                duration_ms=outcome.duration_ms,
            )
        if not outcome.ok:
            raise DeliveryFailed(outcome.error)

    return deliver
