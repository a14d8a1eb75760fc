"""The one entitlement function every gate asks (docs/mail.md, "Billing").

* :func:`require_feature` -> 402 plan_required when the account's plan lacks a feature.
* :func:`reserve` -> 413 quota_exceeded when one more (or ``amount`` more) would
  pass a limit. It runs in the creating transaction and locks the account's
  ``mail.billing_accounts`` row first, so two requests racing for the last slot
  are serialised: the second counts after the first commits, and loses.
* :func:`entitlement` is what GET /api/entitlement and the Overview show:
  the plan, its features and limits and the usage of each, counted by the
  same SQL the gates use.

The SMTP paths reach the same rules through mail/directory.py: RCPT TO reads
the plan's storage_bytes in its lookup statement, submission reserves
sends_per_month with :func:`reserve`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from common.db import Conn, execute, fetch_one
from common.records import Record
from mail import directory
from mail.billing.plans import BUILTIN_FREE, FEATURES, LIMITS
from mail.errors import plan_required, quota_exceeded


@dataclass(frozen=True)
class Plan(Record):
    id: str
    name: str
    description: str
    position: int
    visible: bool
    is_default: bool
    price: int
    currency: str
    interval: str
    features: dict[str, bool]
    limits: dict[str, int | None]
    stripe_price_id: str | None

    def has(self, feature: str) -> bool:
        return bool(self.features.get(feature))

    def limit(self, name: str) -> int | None:
        value = self.limits.get(name)
        return None if value is None else int(value)


@dataclass(frozen=True)
class Entitlement:
    plan: Plan
    usage: dict[str, int]

    def over(self) -> list[str]:
        """Limits the account is above (after a downgrade): their resources are read-only."""
        return [
            name
            for name, used in self.usage.items()
            if (cap := self.plan.limit(name)) is not None and used > cap
        ]


_PLAN = 'SELECT id, name, description, position, visible, is_default, price, currency, "interval", features, limits, stripe_price_id FROM mail.plans'

# How much of each counted limit an account uses. sends_per_month and
# storage_bytes are not rows of mail's: a counter, and mta's quota rows.
_COUNTS = {
    "domains": "SELECT count(*) FROM mail.domains WHERE account_id = %(a)s",
    "addresses": """SELECT count(*) FROM mail.addresses x
                      JOIN mail.domains d ON d.id = x.domain_id WHERE d.account_id = %(a)s""",
    "api_keys": "SELECT count(*) FROM mail.api_keys WHERE account_id = %(a)s",
    "webhooks": "SELECT count(*) FROM mail.webhooks WHERE account_id = %(a)s",
    "sends_per_month": """SELECT coalesce((SELECT sends FROM mail.billing_usage
                            WHERE account_id = %(a)s AND period = %(period)s), 0)""",
}


def period_of(now: datetime) -> date:
    """The calendar month (UTC) sends are counted in."""
    return date(now.year, now.month, 1)


async def plan_of(conn: Conn, account_id: str) -> Plan:
    row = await fetch_one(conn, f"{_PLAN} WHERE id = mail.plan_of(%s)", (account_id,))
    if row is None:
        # Plans are synchronised when the mail service starts; a daemon running
        # alone before that is under the built-in plan, which limits nothing.
        return Plan(**{k: v for k, v in BUILTIN_FREE.__dict__.items()})
    return Plan.from_row(row)


async def require_feature(conn: Conn, account_id: str, feature: str) -> Plan:
    """The account's plan, or 402 plan_required naming ``feature``."""
    assert feature in FEATURES, feature
    plan = await plan_of(conn, account_id)
    if not plan.has(feature):
        raise plan_required(
            f"the {feature} feature is not included in your plan ({plan.name}); upgrade to use it"
        )
    return plan


async def lock(conn: Conn, account_id: str) -> None:
    """Take the account's billing row lock until the caller's transaction ends."""
    await execute(
        conn,
        "INSERT INTO mail.billing_accounts (account_id) VALUES (%s) ON CONFLICT DO NOTHING",
        (account_id,),
    )
    await execute(
        conn, "SELECT 1 FROM mail.billing_accounts WHERE account_id = %s FOR UPDATE", (account_id,)
    )


async def count(conn: Conn, account_id: str, name: str, now: datetime) -> int:
    if name == "storage_bytes":
        return await directory.account_used_bytes(conn, account_id)
    sql = _COUNTS.get(name)
    if sql is None:
        return 0
    row = await fetch_one(conn, f"SELECT ({sql}) AS n", {"a": account_id, "period": period_of(now)})
    return int(row["n"]) if row else 0


async def reserve(
    conn: Conn, account_id: str, name: str, amount: int = 1, *, now: datetime
) -> None:
    """Room for ``amount`` more of ``name``, or 413 quota_exceeded; in the creating transaction.

    sends_per_month is a counter: reserving also counts the sends.
    """
    assert name in LIMITS, name
    await lock(conn, account_id)
    plan = await plan_of(conn, account_id)
    cap = plan.limit(name)
    if cap is not None:
        used = await count(conn, account_id, name, now)
        if used + amount > cap:
            raise quota_exceeded(
                f"the {name} limit of your plan ({plan.name}) is reached: {used} used of {cap}"
            )
    if name == "sends_per_month":
        await execute(
            conn,
            """
            INSERT INTO mail.billing_usage (account_id, period, sends) VALUES (%s, %s, %s)
            ON CONFLICT (account_id, period) DO UPDATE
               SET sends = mail.billing_usage.sends + EXCLUDED.sends
            """,
            (account_id, period_of(now), amount),
        )


async def release_sends(conn: Conn, account_id: str, amount: int, now: datetime) -> None:
    """Give back sends reserved for mail that was then not queued."""
    await execute(
        conn,
        """UPDATE mail.billing_usage SET sends = greatest(sends - %s, 0)
            WHERE account_id = %s AND period = %s""",
        (amount, account_id, period_of(now)),
    )


async def require_within(conn: Conn, account_id: str, name: str, *, now: datetime) -> None:
    """413 when the account is above ``name`` (after a downgrade): its resources are read-only."""
    plan = await plan_of(conn, account_id)
    cap = plan.limit(name)
    if cap is not None and (used := await count(conn, account_id, name, now)) > cap:
        raise quota_exceeded(
            f"over the {name} limit of your plan ({plan.name}): {used} of {cap}; "
            "these resources are read-only until you are back under it"
        )


async def entitlement(conn: Conn, account_id: str, now: datetime) -> Entitlement:
    plan = await plan_of(conn, account_id)
    usage: dict[str, int] = {}
    for name in LIMITS:
        usage[name] = await count(conn, account_id, name, now)
    return Entitlement(plan=plan, usage=usage)


def limits_view(plan: Plan) -> dict[str, Any]:
    return {name: plan.limit(name) for name in LIMITS}
