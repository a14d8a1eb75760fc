"""SQL of billing's tables (mail/migrations/0100_billing.sql). Connection first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_one, fetch_val
from common.records import Record
from mail.billing.entitlement import _PLAN, Plan
from mail.web.lists import Sorts


@dataclass(frozen=True)
class BillingAccount(Record):
    account_id: str
    plan_id: str | None
    status: str
    current_period_start: datetime | None
    current_period_end: datetime | None
    provider: str
    customer_id: str | None
    subscription_id: str | None
    provider_event_at: datetime | None
    tax_id_type: str | None
    tax_id_value: str | None
    tax_id_provider_id: str | None


@dataclass(frozen=True)
class PaymentMethod(Record):
    id: str
    account_id: str
    provider_id: str
    brand: str
    last4: str
    exp_month: int | None
    exp_year: int | None
    is_default: bool
    created_at: datetime


@dataclass(frozen=True)
class Transaction(Record):
    id: str
    account_id: str
    provider_id: str
    kind: str
    status: str
    amount: int
    currency: str
    description: str
    hosted_url: str | None
    created_at: datetime


@dataclass(frozen=True)
class Activity(Record):
    action: str
    detail: dict[str, Any]
    created_at: datetime


_ACCOUNT = """SELECT account_id::text, plan_id, status, current_period_start, current_period_end,
                     provider, customer_id, subscription_id, provider_event_at,
                     tax_id_type, tax_id_value, tax_id_provider_id
                FROM mail.billing_accounts"""


async def visible_plans(conn: Conn) -> list[Plan]:
    rows = await fetch_all(conn, f"{_PLAN} WHERE visible ORDER BY position, id")
    return [Plan.from_row(r) for r in rows]


async def plan(conn: Conn, plan_id: str) -> Plan | None:
    return Plan.from_optional(await fetch_one(conn, f"{_PLAN} WHERE id = %s", (plan_id,)))


async def plan_by_price(conn: Conn, price_id: str) -> Plan | None:
    return Plan.from_optional(
        await fetch_one(conn, f"{_PLAN} WHERE stripe_price_id = %s", (price_id,))
    )


async def account(conn: Conn, account_id: str, *, for_update: bool = False) -> BillingAccount:
    """The account's billing row, created on first use (locked with ``for_update``)."""
    await execute(
        conn,
        "INSERT INTO mail.billing_accounts (account_id) VALUES (%s) ON CONFLICT DO NOTHING",
        (account_id,),
    )
    lock = " FOR UPDATE" if for_update else ""
    row = await fetch_one(conn, f"{_ACCOUNT} WHERE account_id = %s{lock}", (account_id,))
    assert row is not None
    return BillingAccount.from_row(row)


async def account_by_customer(conn: Conn, customer_id: str) -> str | None:
    value = await fetch_val(
        conn,
        "SELECT account_id::text FROM mail.billing_accounts WHERE customer_id = %s",
        (customer_id,),
    )
    return None if value is None else str(value)


async def update_account(
    conn: Conn, account_id: str, changes: dict[str, Any], now: datetime
) -> None:
    sets = ", ".join(f"{name} = %({name})s" for name in changes)
    await execute(
        conn,
        f"UPDATE mail.billing_accounts SET {sets}, updated_at = %(now)s WHERE account_id = %(a)s",
        {**changes, "now": now, "a": account_id},
    )


async def due(conn: Conn, before: datetime, limit: int = 100) -> list[BillingAccount]:
    """Subscriptions whose period ended before ``before`` (the periodic job)."""
    rows = await fetch_all(
        conn,
        f"""{_ACCOUNT} WHERE status IN ('active', 'cancelled', 'past_due')
              AND current_period_end IS NOT NULL AND current_period_end <= %s
            ORDER BY current_period_end LIMIT %s""",
        (before, limit),
    )
    return [BillingAccount.from_row(r) for r in rows]


async def record_activity(
    conn: Conn, account_id: str, action: str, detail: dict[str, Any], now: datetime
) -> None:
    await execute(
        conn,
        """INSERT INTO mail.billing_activity (account_id, action, detail, created_at)
           VALUES (%s, %s, %s, %s)""",
        (account_id, action, Json(detail), now),
    )


async def activity(conn: Conn, account_id: str, limit: int = 20) -> list[Activity]:
    rows = await fetch_all(
        conn,
        """SELECT action, detail, created_at FROM mail.billing_activity
            WHERE account_id = %s ORDER BY id DESC LIMIT %s""",
        (account_id, limit),
    )
    return [Activity.from_row(r) for r in rows]


async def first_event(
    conn: Conn, event_id: str, type_: str, created: datetime, account_id: str | None, now: datetime
) -> bool:
    """Record a provider event; False when its id was seen before (a replay)."""
    inserted = await fetch_val(
        conn,
        """INSERT INTO mail.payment_events (id, type, created, account_id, received_at)
           VALUES (%s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING 1""",
        (event_id, type_, created, account_id, now),
    )
    return inserted is not None


_METHOD = """SELECT id::text, account_id::text, provider_id, brand, last4, exp_month, exp_year,
                    is_default, created_at FROM mail.payment_methods"""


async def methods(conn: Conn, account_id: str) -> list[PaymentMethod]:
    rows = await fetch_all(
        conn,
        f"{_METHOD} WHERE account_id = %s ORDER BY is_default DESC, created_at DESC, id",
        (account_id,),
    )
    return [PaymentMethod.from_row(r) for r in rows]


async def method(conn: Conn, account_id: str, method_id: str) -> PaymentMethod | None:
    return PaymentMethod.from_optional(
        await fetch_one(
            conn, f"{_METHOD} WHERE account_id = %s AND id = %s", (account_id, method_id)
        )
    )


async def upsert_method(conn: Conn, account_id: str, pm: dict[str, Any], now: datetime) -> str:
    card = pm.get("card") or {}
    value = await fetch_val(
        conn,
        """
        INSERT INTO mail.payment_methods (account_id, provider_id, brand, last4, exp_month,
                                          exp_year, created_at)
        VALUES (%s, %s, %s, %s, %s, %s, %s)
        ON CONFLICT (account_id, provider_id) DO UPDATE SET
            brand = EXCLUDED.brand, last4 = EXCLUDED.last4,
            exp_month = EXCLUDED.exp_month, exp_year = EXCLUDED.exp_year
        RETURNING id::text
        """,
        (
            account_id,
            str(pm["id"]),
            str(card.get("brand") or pm.get("type") or ""),
            str(card.get("last4") or ""),
            card.get("exp_month"),
            card.get("exp_year"),
            now,
        ),
    )
    return str(value)


async def delete_method_by_provider(conn: Conn, account_id: str, provider_id: str) -> int:
    return await execute(
        conn,
        "DELETE FROM mail.payment_methods WHERE account_id = %s AND provider_id = %s",
        (account_id, provider_id),
    )


async def set_default_method(conn: Conn, account_id: str, provider_id: str) -> None:
    await execute(
        conn,
        "UPDATE mail.payment_methods SET is_default = (provider_id = %s) WHERE account_id = %s",
        (provider_id, account_id),
    )


_TRANSACTION = """SELECT id::text, account_id::text, provider_id, kind, status, amount, currency,
                         description, hosted_url, created_at FROM mail.billing_transactions"""
TRANSACTION_SORTS = Sorts(
    columns={"created_at": "created_at", "amount": "amount", "status": "status"},
    default="created_at",
)


async def transactions(
    conn: Conn, account_id: str, order_by: str, limit: int, offset: int
) -> tuple[list[Transaction], int]:
    rows = await fetch_all(
        conn,
        f"{_TRANSACTION} WHERE account_id = %s ORDER BY {order_by} LIMIT %s OFFSET %s",
        (account_id, limit, offset),
    )
    total = await fetch_val(
        conn, "SELECT count(*) FROM mail.billing_transactions WHERE account_id = %s", (account_id,)
    )
    return [Transaction.from_row(r) for r in rows], int(total or 0)


async def transaction(conn: Conn, account_id: str, transaction_id: str) -> Transaction | None:
    return Transaction.from_optional(
        await fetch_one(
            conn, f"{_TRANSACTION} WHERE account_id = %s AND id = %s", (account_id, transaction_id)
        )
    )


async def upsert_transaction(
    conn: Conn, account_id: str, fields: dict[str, Any], at: datetime
) -> None:
    """Insert or update by the provider's id; an update older than the stored one is ignored."""
    await execute(
        conn,
        """
        INSERT INTO mail.billing_transactions (account_id, provider_id, kind, status, amount,
            currency, description, hosted_url, created_at, updated_at)
        VALUES (%(a)s, %(provider_id)s, %(kind)s, %(status)s, %(amount)s, %(currency)s,
                %(description)s, %(hosted_url)s, %(created_at)s, %(at)s)
        ON CONFLICT (provider_id) DO UPDATE SET
            status = EXCLUDED.status, amount = EXCLUDED.amount,
            hosted_url = coalesce(EXCLUDED.hosted_url, mail.billing_transactions.hosted_url),
            updated_at = EXCLUDED.updated_at
         WHERE mail.billing_transactions.updated_at <= EXCLUDED.updated_at
           AND mail.billing_transactions.account_id = EXCLUDED.account_id
        """,
        {**fields, "a": account_id, "at": at},
    )
