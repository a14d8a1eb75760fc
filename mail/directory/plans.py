"""What an account's plan allows: its features, its limits, reserve and release.

The one module that reads ``mail.plans`` for a decision (docs/mail.md,
"Billing"): the panel's gates (through mail/billing/entitlement.py, which
turns the refusals below into the service's 402 and 413), submission and
every other sending path (:func:`reserve_sends`), JMAP push
(:func:`push_allowed`), and the recipient and quota statements of this
package, which embed :func:`storage_cap_sql` so RCPT TO stays one round trip.

* :func:`reserve` runs in the creating transaction and locks the account's
  ``mail.billing_accounts`` row first, so two requests racing for the last
  slot are serialised: the second counts after the first commits, and loses.
  Sends are a counter row of their own: it is tested and counted in one
  upsert that locks it, with the same effect in one statement.
* :func:`entitlement` is what GET /api/entitlement and the Overview show:
  the plan, its features and limits and the usage of each, counted by the
  same SQL the gates use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from common.db import Conn, Prepared, execute, fetch_one
from common.records import Record
from mail.directory.storage import account_used_bytes

# Booleans: a route or daemon path the plan may switch off (402 plan_required).
FEATURES = ("custom_domains", "api_sending", "webhooks", "transfers", "filters", "jmap_push")
# Numbers: how many an account may hold or use (413 quota_exceeded); null is unlimited.
LIMITS = (
    "domains",
    "addresses",
    "storage_bytes",
    "sends_per_month",
    "api_keys",
    "webhooks",
)


class PlanRequired(Exception):
    """The account's plan lacks a feature; the message names it (402 in the panel)."""

    @property
    def message(self) -> str:
        return str(self)


class LimitReached(Exception):
    """One more would pass a limit of the plan; the message says which (413 in the panel)."""

    @property
    def message(self) -> str:
        return str(self)


@dataclass(frozen=True)
class PlanSpec:
    id: str
    name: str
    description: str = ""
    position: int = 0
    visible: bool = True
    is_default: bool = False
    price: int = 0
    currency: str = "usd"
    interval: str = "month"
    features: dict[str, bool] = field(default_factory=dict)
    limits: dict[str, int | None] = field(default_factory=dict)
    stripe_price_id: str | None = None


BUILTIN_FREE = PlanSpec(
    id="free",
    name="Free",
    description="Everything, without limits: the plan of an instance without billing.",
    is_default=True,
    features=dict.fromkeys(FEATURES, True),
    limits=dict.fromkeys(LIMITS),
)


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


PLAN_COLUMNS = 'SELECT id, name, description, position, visible, is_default, price, currency, "interval", features, limits, stripe_price_id FROM mail.plans'


def storage_cap_sql(account: str) -> str:
    """A scalar subquery: the storage_bytes limit of the plan of the account ``account``
    (a column expression) names; NULL when unlimited. The recipient and quota
    statements embed it, so the plan is read here and the lookup stays one round trip."""
    return (
        "(SELECT (p.limits ->> 'storage_bytes')::bigint"
        f" FROM mail.plans p WHERE p.id = mail.plan_of({account}))"
    )


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
    row = await fetch_one(conn, f"{PLAN_COLUMNS} WHERE id = mail.plan_of(%s)", (account_id,))
    if row is None:
        # Plans are synchronised when the mail service starts; a daemon running
        # alone before that is under the built-in plan, which limits nothing.
        return Plan(**{k: v for k, v in BUILTIN_FREE.__dict__.items()})
    return Plan.from_row(row)


async def require_feature(conn: Conn, account_id: str, feature: str) -> Plan:
    """The account's plan, or :class:`PlanRequired` naming ``feature``."""
    assert feature in FEATURES, feature
    plan = await plan_of(conn, account_id)
    if not plan.has(feature):
        raise PlanRequired(
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
        return await account_used_bytes(conn, account_id)
    sql = _COUNTS.get(name)
    if sql is None:
        return 0
    row = await fetch_one(conn, f"SELECT ({sql}) AS n", {"a": account_id, "period": period_of(now)})
    return int(row["n"]) if row else 0


async def reserve(
    conn: Conn, account_id: str, name: str, amount: int = 1, *, now: datetime
) -> None:
    """Room for ``amount`` more of ``name``, or :class:`LimitReached`; in the creating
    transaction. sends_per_month is a counter: reserving also counts the sends."""
    assert name in LIMITS, name
    if name == "sends_per_month":
        await _reserve_sends(conn, account_id, amount, now)
        return
    await lock(conn, account_id)
    plan = await plan_of(conn, account_id)
    cap = plan.limit(name)
    if cap is not None:
        used = await count(conn, account_id, name, now)
        if used + amount > cap:
            raise LimitReached(
                f"the {name} limit of your plan ({plan.name}) is reached: {used} used of {cap}"
            )


# The month's counter row, counted only while it stays within the plan's cap,
# in one statement: the upsert locks the row (a racing send waits for its
# commit, then tests the cap against the row as committed), so the counter
# is its own lock and sends never pass the cap. No row back: refused, and
# nothing was counted. (Submission counts every message in its queue's
# group commit: this was five statements, the lock, the plan, the count and
# the upsert.)
_COUNT_SENDS = Prepared(
    """
    WITH cap AS (
        SELECT (SELECT (p.limits ->> 'sends_per_month')::bigint
                  FROM mail.plans p WHERE p.id = mail.plan_of(%(a)s)) AS n
    )
    INSERT INTO mail.billing_usage AS u (account_id, period, sends)
    SELECT %(a)s, %(period)s, %(n)s FROM cap WHERE cap.n IS NULL OR %(n)s <= cap.n
    ON CONFLICT (account_id, period) DO UPDATE SET sends = u.sends + EXCLUDED.sends
     WHERE (SELECT n FROM cap) IS NULL OR u.sends + EXCLUDED.sends <= (SELECT n FROM cap)
    RETURNING u.sends
    """
)


async def _reserve_sends(conn: Conn, account_id: str, amount: int, now: datetime) -> None:
    params = {"a": account_id, "period": period_of(now), "n": amount}
    if await _COUNT_SENDS.fetch_one(conn, params) is not None:
        return
    # Refused: say why, from the same rows (nothing was counted).
    plan = await plan_of(conn, account_id)
    used = await count(conn, account_id, "sends_per_month", now)
    raise LimitReached(
        f"the sends_per_month limit of your plan ({plan.name}) is reached:"
        f" {used} used of {plan.limit('sends_per_month')}"
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
    """:class:`LimitReached` when the account is above ``name`` (after a downgrade):
    its resources are read-only."""
    plan = await plan_of(conn, account_id)
    cap = plan.limit(name)
    if cap is not None and (used := await count(conn, account_id, name, now)) > cap:
        raise LimitReached(
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


async def reserve_sends(conn: Conn, account_id: str, count: int, now: datetime) -> str | None:
    """Count ``count`` sends against the account's plan, in the caller's transaction.

    None when they fit; otherwise the reason, for the SMTP reply (nothing is counted).
    """
    try:
        await reserve(conn, account_id, "sends_per_month", count, now=now)
    except LimitReached as exc:
        return exc.message
    return None


async def return_sends(conn: Conn, account_id: str, count: int, now: datetime) -> None:
    """Give back sends reserved for mail that was then not queued."""
    await release_sends(conn, account_id, count, now)


_PUSH = Prepared(
    """
    SELECT bool_and(coalesce((p.features ->> 'jmap_push')::boolean, false)) AS allowed
      FROM mail.addresses a
      JOIN mail.domains d ON d.id = a.domain_id
      JOIN mail.plans p ON p.id = mail.plan_of(d.account_id)
     WHERE a.id = ANY(%(ids)s::text[]::uuid[])
    """
)


async def push_allowed(conn: Conn, address_ids: list[str]) -> bool:
    """Whether the plans of these addresses' accounts include ``jmap_push``.

    No plan row (billing never synchronised, a daemon alone): allowed, as the
    built-in plan limits nothing.
    """
    row = await _PUSH.fetch_one(conn, {"ids": address_ids})
    return row is None or row["allowed"] is None or bool(row["allowed"])
