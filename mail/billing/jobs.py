"""Billing's start-up sync and its periodic job (renewal and lapse by the clock)."""

from __future__ import annotations

import logging

from common.jobs import Job
from mail.billing import plans, store
from mail.billing.service import end
from mail.billing.stripe import Stripe, StripeError
from mail.billing.webhook import _period
from mail.context import MailContext

log = logging.getLogger(__name__)

PERIODS_JOB = "mail.billing.periods"
PERIODS_EVERY_SECONDS = 3600


async def sync_plans(ctx: MailContext) -> None:
    specs = plans.load(ctx.billing.plans_file)
    async with ctx.db.transaction() as conn:
        await plans.sync(conn, specs, ctx.clock.now())


def register(ctx: MailContext) -> None:
    async def run(job: Job) -> None:
        await periods(ctx)

    ctx.runtime.jobs.register(PERIODS_JOB, run, every=PERIODS_EVERY_SECONDS)


async def periods(ctx: MailContext) -> int:
    """End what is due: a cancelled subscription at its period end, an unpaid one after the grace.

    Before lapsing a Stripe subscription the job asks Stripe for it: a renewal
    whose event was lost still renews here. Returns how many rows changed.
    """
    now = ctx.clock.now()
    async with ctx.db.connection() as conn:
        due = await store.due(conn, now)
    changed = 0
    grace = ctx.billing.grace_seconds
    for row in due:
        assert row.current_period_end is not None
        renewed_to = None
        if row.status != "cancelled":
            if row.subscription_id and ctx.billing.provider == "stripe":
                try:
                    sub = await Stripe(ctx.billing).get_subscription(row.subscription_id)
                except StripeError:
                    log.warning("billing: Stripe did not answer for a due subscription")
                    continue
                _, end_ = _period(sub)
                if (
                    sub.get("status") in ("active", "trialing")
                    and end_
                    and end_ > row.current_period_end
                ):
                    renewed_to = end_
            if renewed_to is None and (now - row.current_period_end).total_seconds() < grace:
                continue  # still in the grace: the payment may yet come
        async with ctx.db.transaction() as conn:
            current = await store.account(conn, row.account_id, for_update=True)
            if current.current_period_end != row.current_period_end:
                continue  # an event moved it meanwhile
            if renewed_to is not None:
                await store.update_account(
                    conn,
                    row.account_id,
                    {"current_period_end": renewed_to, "status": "active"},
                    now,
                )
                await store.record_activity(
                    conn,
                    row.account_id,
                    "subscription.renewed",
                    {"period_end": renewed_to.isoformat(), "by": "job"},
                    now,
                )
            else:
                status = "lapsed"
                await end(conn, current, status, now)
                action = (
                    "subscription.ended" if row.status == "cancelled" else "subscription.lapsed"
                )
                await store.record_activity(
                    conn, row.account_id, action, {"plan": row.plan_id, "by": "job"}, now
                )
            changed += 1
    return changed
