"""From the event log to signed POSTs: fan-out, attempts, retries, the failing rule.

Fan-out: :func:`fan_out` takes the events not yet dispatched (mta.events,
``FOR UPDATE SKIP LOCKED`` so processes share the work), makes one delivery
per subscribed, enabled endpoint of the event's account, enqueues its first
attempt and marks the events dispatched, all in one transaction. It runs as a
recurring job (the safety net) and, in a process that runs the workers, at
once when the event log NOTIFYs (:func:`listen`).

Attempts follow Svix's schedule (the service behind Resend's webhooks): the
first at once, then after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h: eight
tries over about 27.6 hours, then the delivery is ``failed``. Any 2xx is a
success; anything else, a redirect or no answer is a failure. Each try is a
job of its own, enqueued by the previous one in the transaction that records
it. An endpoint whose attempts have all failed for 5 days (and at least
``DISABLE_MIN_FAILURES`` of them) is switched off with reason ``failing``;
PATCH ``enabled: true`` switches it back on. Order is not promised: retries
interleave with newer events, as with Svix and Resend.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from common import metrics
from common.jobs import Job, enqueue
from mail.context import MailContext
from mail.webhooks import store
from mail.webhooks.service import event_body, get_event, signed_post
from mail.webhooks.store import Attempt, Delivery
from mta import mailstore
from mta.mailstore import Event

log = logging.getLogger(__name__)

FANOUT_JOB = "mail.webhooks.fan_out"
DELIVER_JOB = "mail.webhooks.deliver"
# The safety net's period; a NOTIFY wakes the fan-out at once in between.
FANOUT_EVERY_SECONDS = 10
FANOUT_BATCH = 200
# Seconds between try n and try n+1 (Svix's schedule): 8 tries in all.
RETRY_DELAYS: tuple[int, ...] = (5, 300, 1800, 7200, 18000, 36000, 36000)
DISABLE_AFTER_SECONDS = 5 * 24 * 3600
DISABLE_MIN_FAILURES = 5
# How many times the job queue runs one try that crashed (not one the receiver failed).
JOB_ATTEMPTS = 3


async def fan_out(ctx: MailContext) -> int:
    """Turn every undispatched event into deliveries; returns how many events were read."""
    total = 0
    while True:
        now = ctx.clock.now()
        async with ctx.db.transaction() as conn:
            events = await mailstore.undispatched_events(conn, FANOUT_BATCH)
            if not events:
                return total
            hooks = await store.subscribers(conn, sorted({e.account_id for e in events}))
            rows = [
                {
                    "webhook_id": hook.id,
                    "account_id": event.account_id,
                    "event_id": event.id,
                    "event_type": event.type,
                    "event_created_at": event.created_at,
                }
                for event in events
                for hook in hooks
                if hook.account_id == event.account_id and event.type in hook.events
            ]
            # Each delivery runs under the request id its event was recorded under.
            request_ids = {e.id: e.request_id for e in events}
            for delivery_id, event_id in await store.insert_deliveries(conn, rows, now):
                await enqueue(
                    conn,
                    DELIVER_JOB,
                    {"delivery": delivery_id, "try": 1},
                    run_at=now,
                    max_attempts=JOB_ATTEMPTS,
                    request_id=request_ids.get(event_id),
                )
            await mailstore.mark_events_dispatched(conn, [e.id for e in events], now)
        total += len(events)
        if len(events) < FANOUT_BATCH:
            return total


async def attempt(ctx: MailContext, delivery_id: str, *, trigger: str, try_: int = 0) -> bool:
    """One signed POST of a delivery, recorded; a scheduled failure enqueues the next try.

    Returns whether the receiver took it. ``trigger`` is ``scheduled`` (the
    job, try ``try_`` of the schedule) or ``replay`` (a person asked: the
    endpoint is tried even when switched off, and no retry follows).
    """
    async with ctx.db.connection() as conn:
        delivery = await store.get_delivery(conn, delivery_id)
        webhook = None if delivery is None else await store.get_any(conn, delivery.webhook_id)
        event: Event | None = None
        if delivery is not None:
            event = await mailstore.get_event(conn, delivery.account_id, delivery.event_id)
    if delivery is None or webhook is None:
        return False  # the endpoint was deleted since (its deliveries with it)
    if event is None or (trigger == "scheduled" and not webhook.enabled):
        async with ctx.db.connection() as conn:
            await store.give_up(conn, delivery.id)
        return False
    if trigger == "scheduled" and delivery.status in ("delivered", "failed"):
        return delivery.status == "delivered"  # a crashed job's rerun: already settled
    outcome = await signed_post(ctx, webhook, delivery.message_id, event_body(event))
    metrics.webhook_attempt("mail", outcome.status, outcome.ok)
    now = ctx.clock.now()
    next_at = None
    if outcome.ok:
        state = "delivered"
    elif trigger == "scheduled" and try_ <= len(RETRY_DELAYS):
        state, next_at = "retrying", now + timedelta(seconds=RETRY_DELAYS[try_ - 1])
    elif trigger == "replay" and delivery.status == "retrying":
        # A failed replay leaves the schedule's next try where it was.
        state = "retrying"
    else:
        state = "failed"
    async with ctx.db.transaction() as conn:
        await store.record_attempt(
            conn,
            delivery.id,
            trigger=trigger,
            at=now,
            status=outcome.status,
            ok=outcome.ok,
            error=outcome.error,
            duration_ms=outcome.duration_ms,
            response=outcome.response,
            state=state,
            next_attempt_at=next_at if state != "retrying" or next_at else delivery.next_attempt_at,
        )
        if next_at is not None:
            await enqueue(
                conn,
                DELIVER_JOB,
                {"delivery": delivery.id, "try": try_ + 1},
                run_at=next_at,
                max_attempts=JOB_ATTEMPTS,
            )
        switched_off = await store.attempt_outcome(
            conn,
            webhook.id,
            outcome.ok,
            now,
            disable_after=DISABLE_AFTER_SECONDS,
            min_failures=DISABLE_MIN_FAILURES,
        )
    if switched_off and webhook.enabled:
        log.warning("webhook %s switched off after a run of failures", webhook.id)
    return outcome.ok


async def run_delivery_job(ctx: MailContext, job: Job) -> None:
    await attempt(
        ctx, str(job.payload["delivery"]), trigger="scheduled", try_=int(job.payload["try"])
    )


async def replay(
    ctx: MailContext, account_id: str, webhook_id: str, event_id: str
) -> tuple[Delivery, Event | None, list[Attempt]]:
    """Redeliver now, with a fresh attempt, whatever the earlier ones did."""
    delivery, _, _ = await get_event(ctx, account_id, webhook_id, event_id)
    await attempt(ctx, delivery.id, trigger="replay")
    return await get_event(ctx, account_id, webhook_id, event_id)


@asynccontextmanager
async def listen(ctx: MailContext) -> AsyncIterator[None]:
    """Fan out as soon as the event log NOTIFYs, for as long as the block runs.

    The notification comes through the process's hub (common/notify.py); after
    a lost connection the hub's gap wakes the fan-out too, for whatever
    arrived while nobody listened.
    """
    wake = asyncio.Event()
    subscription = ctx.runtime.notifications.subscribe(
        mailstore.EVENTS_CHANNEL, lambda _payload: wake.set(), on_gap=wake.set
    )
    wake.set()  # whatever arrived before start-up
    task = asyncio.create_task(_fan_out_on_wake(ctx, wake), name="mail-events-fan-out")
    try:
        yield
    finally:
        subscription.close()
        task.cancel()
        await asyncio.wait({task}, timeout=2.0)


async def _fan_out_on_wake(ctx: MailContext, wake: asyncio.Event) -> None:
    while True:
        await wake.wait()
        wake.clear()
        try:
            await fan_out(ctx)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("webhook fan-out failed; the recurring job retries")
