"""The plan's gates in the panel's error shape (docs/mail.md, "Billing").

The rules live in :mod:`mail.directory.plans`, the one module reading an
account's plan, which every protocol path asks too; this module turns its
refusals into the service's errors:

* :func:`require_feature` -> 402 plan_required when the account's plan lacks a feature.
* :func:`reserve` -> 413 quota_exceeded when one more (or ``amount`` more) would
  pass a limit (in the creating transaction, the account's row locked first).
* :func:`require_within` -> 413 when the account is above a limit after a downgrade.
* :func:`entitlement` is what GET /api/entitlement and the Overview show.
"""

from __future__ import annotations

from datetime import datetime

from common.db import Conn
from mail.directory import plans
from mail.directory.plans import (
    PLAN_COLUMNS as _PLAN,
)
from mail.directory.plans import (
    Entitlement,
    Plan,
    count,
    entitlement,
    limits_view,
    lock,
    period_of,
    plan_of,
    release_sends,
)
from mail.errors import plan_required, quota_exceeded

__all__ = [
    "_PLAN",
    "Entitlement",
    "Plan",
    "count",
    "entitlement",
    "limits_view",
    "lock",
    "period_of",
    "plan_of",
    "release_sends",
    "require_feature",
    "require_within",
    "reserve",
]


async def require_feature(conn: Conn, account_id: str, feature: str) -> Plan:
    """The account's plan, or 402 plan_required naming ``feature``."""
    try:
        return await plans.require_feature(conn, account_id, feature)
    except plans.PlanRequired as exc:
        raise plan_required(exc.message) from None


async def reserve(
    conn: Conn, account_id: str, name: str, amount: int = 1, *, now: datetime
) -> None:
    """Room for ``amount`` more of ``name``, or 413 quota_exceeded; in the creating transaction.

    sends_per_month is a counter: reserving also counts the sends.
    """
    try:
        await plans.reserve(conn, account_id, name, amount, now=now)
    except plans.LimitReached as exc:
        raise quota_exceeded(exc.message) from None


async def require_within(conn: Conn, account_id: str, name: str, *, now: datetime) -> None:
    """413 when the account is above ``name`` (after a downgrade): its resources are read-only."""
    try:
        await plans.require_within(conn, account_id, name, now=now)
    except plans.LimitReached as exc:
        raise quota_exceeded(exc.message) from None
