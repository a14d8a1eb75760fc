"""GET /api/overview: everything the Overview screen renders, in one call.

Nothing here reads mail. Counts come from the account's event log: the
closed days from the daily rollup (mta.event_days, maintained by the
``mail.event_rollup`` job), today and the last 24 hours from an index-only
count (mta.events (account_id, type, created_at)). Storage comes from the
per-address usage counters mta keeps with every delivery, the rest from
small tables (domains, addresses, webhooks). Received is ``email.received``
(one per delivered mailbox); sent is ``email.sent`` (one per message the
outbound queue handed over). "30 days" is the 30 UTC days of the daily
series, today included. Rates are over them: bounced / sent and
complained / sent (Resend's dashboard divides by sent too), None while
nothing was sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta

from mail.billing import entitlement
from mail.billing.entitlement import Entitlement
from mail.context import MailContext
from mail.domains import store as domains_store
from mail.domains.store import Domain
from mail.overview import store, transfers
from mail.web.lists import ListParams
from mail.webhooks import store as webhooks_store
from mail.webhooks.store import Webhook
from mta import mailstore
from mta.mailstore import Event

DAYS = 30
# The domains the Overview lists (the count is complete; the screen links to the rest).
MAX_DOMAINS = 100
RECENT = 10
COUNTED = ["email.received", "email.sent", "email.delivered", "email.bounced", "email.complained"]


@dataclass(frozen=True)
class Day:
    day: date
    received: int
    sent: int


@dataclass(frozen=True)
class Overview:
    now: datetime
    domains: list[Domain]
    domain_total: int
    address_count: int
    used_bytes: int
    stored_emails: int
    # Sum of the quotas; None when any address is unlimited (0).
    quota_bytes: int | None
    last_24h: dict[str, int]
    last_30d: dict[str, int]
    daily: list[Day]
    recent: list[Event]
    failing_webhooks: list[Webhook]
    running_transfers: list[dict[str, object]]
    # The plan and its usage: the same function GET /api/entitlement answers from.
    entitlement: Entitlement

    def rate(self, type_: str) -> float | None:
        sent = self.last_30d.get("email.sent", 0)
        return None if not sent else round(self.last_30d.get(type_, 0) / sent, 4)


async def overview(ctx: MailContext, account_id: str) -> Overview:
    now = ctx.clock.now()
    first_day = now.date() - timedelta(days=DAYS - 1)
    params = ListParams(1, MAX_DOMAINS, None, "name", "asc", domains_store.DOMAIN_SORTS)
    async with ctx.db.connection() as conn:
        domains, domain_total = await domains_store.list_for_account(conn, account_id, params)
        quotas = await store.address_quotas(conn, account_id)
        used, emails = await mailstore.usage_of(conn, [q.id for q in quotas])
        last_24h = await mailstore.event_counts_since(
            conn, account_id, COUNTED, now - timedelta(hours=24)
        )
        per_day = await mailstore.event_daily_counts(conn, account_id, COUNTED, first_day)
        recent = await mailstore.recent_events(conn, account_id, RECENT)
        failing = await webhooks_store.failing(conn, account_id)
        running = await transfers.running(conn, account_id)
        plan = await entitlement.entitlement(conn, account_id, now)
    counts = {(c.day, c.type): c.count for c in per_day}
    last_30d: dict[str, int] = {}
    for c in per_day:
        last_30d[c.type] = last_30d.get(c.type, 0) + c.count
    daily = [
        Day(d, counts.get((d, "email.received"), 0), counts.get((d, "email.sent"), 0))
        for d in (first_day + timedelta(days=i) for i in range(DAYS))
    ]
    unlimited = any(q.quota_bytes == 0 for q in quotas)
    return Overview(
        now=now,
        domains=domains,
        domain_total=domain_total,
        address_count=len(quotas),
        used_bytes=used,
        stored_emails=emails,
        quota_bytes=None if unlimited else sum(q.quota_bytes for q in quotas),
        last_24h=last_24h,
        last_30d=last_30d,
        daily=daily,
        recent=recent,
        failing_webhooks=failing,
        running_transfers=running,
        entitlement=plan,
    )
