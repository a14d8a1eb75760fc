"""The budget: tokens metered per person and per site per UTC month, against an admin's limits.

Units are the provider's own tokens, in and out, summed as they report them
(OpenAI ``usage``, Anthropic ``message_start``/``message_delta`` usage,
Ollama ``prompt_eval_count``/``eval_count``). A limit counts in + out. A call
is refused once the month's use has reached a limit; the call that crosses
it is allowed to finish (its size is known only afterwards). The bubble
spends the site's budget (no person). Spending is a person's capability
(``ai.spend``, which no agent key holds: spec, Authentication 5).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from content.assistant import store
from content.assistant.errors import BudgetExceeded, refuse_unknown
from content.assistant.providers import Usage
from content.auth.credentials import require
from content.auth.principal import Principal
from content.context import Context
from content.errors import Problems
from content.writes import write

SPEND = "ai.spend"
MAX_LIMIT = 10**12


def month_of(now: datetime) -> date:
    return date(now.year, now.month, 1)


def _next_month(now: datetime) -> datetime:
    year, month = (now.year + 1, 1) if now.month == 12 else (now.year, now.month + 1)
    return datetime(year, month, 1, tzinfo=UTC)


def require_spender(principal: Principal) -> None:
    """A person who may spend: agent keys are refused KEY_FORBIDDEN whatever is ticked."""
    require(principal, SPEND)


async def check(ctx: Context, user_id: str | None) -> None:
    """Refuse AI_BUDGET_EXCEEDED when the person's or the site's month is spent."""
    now = ctx.clock.now()
    month = month_of(now)
    async with ctx.db.connection() as conn:
        limits = await store.settings(conn)
        site = await store.site_usage(conn, month)
        mine = await store.usage(conn, month, user_id) if user_id else None
    resets = _next_month(now)
    retry = max(1, int((resets - now).total_seconds()))
    if limits["site_monthly"] is not None:
        used = int(site["tokens_in"]) + int(site["tokens_out"])
        if used >= limits["site_monthly"]:
            raise BudgetExceeded("site", used, limits["site_monthly"], resets.isoformat(), retry)
    if mine is not None and limits["person_monthly"] is not None:
        used = int(mine["tokens_in"]) + int(mine["tokens_out"])
        if used >= limits["person_monthly"]:
            raise BudgetExceeded(
                "person", used, limits["person_monthly"], resets.isoformat(), retry
            )


async def record(ctx: Context, user_id: str | None, usage: Usage) -> None:
    async with ctx.db.connection() as conn:
        await store.add_usage(
            conn, month_of(ctx.clock.now()), user_id or "", usage.tokens_in, usage.tokens_out
        )


def _usage_json(row: dict[str, Any]) -> dict[str, int]:
    return {
        "tokensIn": int(row["tokens_in"]),
        "tokensOut": int(row["tokens_out"]),
        "requests": int(row["requests"]),
    }


async def mine(ctx: Context, user_id: str) -> dict[str, Any]:
    now = ctx.clock.now()
    async with ctx.db.connection() as conn:
        row = await store.usage(conn, month_of(now), user_id)
        limits = await store.settings(conn)
    return {
        "month": month_of(now).isoformat()[:7],
        **_usage_json(row),
        "limit": limits["person_monthly"],
    }


async def overview(ctx: Context) -> dict[str, Any]:
    """GET /api/assistant/budget: the limits and this month's use, site and per person."""
    now = ctx.clock.now()
    month = month_of(now)
    async with ctx.db.connection() as conn:
        limits = await store.settings(conn)
        site = await store.site_usage(conn, month)
        people = await store.usage_by_person(conn, month)
    return {
        "month": month.isoformat()[:7],
        "limits": {
            "personMonthly": limits["person_monthly"],
            "siteMonthly": limits["site_monthly"],
        },
        "site": _usage_json(site),
        "people": [
            {
                "userId": r["user_id"] or None,
                "name": r["name"] if r["user_id"] else "visitor bubble",
                "email": r["email"],
                **_usage_json(r),
            }
            for r in people
        ],
        "resetsAt": _next_month(now).isoformat(),
    }


def _limit(body: dict[str, Any], key: str, problems: Problems) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LIMIT:
        problems.add(key, f"must be null (no limit) or a whole number of tokens up to {MAX_LIMIT}")
        return None
    return value


async def set_limits(ctx: Context, principal: Principal, body: dict[str, Any]) -> dict[str, Any]:
    """PUT /api/assistant/budget {personMonthly, siteMonthly}: null lifts a limit."""
    problems = Problems()
    refuse_unknown(body, ("personMonthly", "siteMonthly"), problems)
    person = _limit(body, "personMonthly", problems)
    site = _limit(body, "siteMonthly", problems)
    problems.raise_if_any()
    async with write(ctx) as tx:
        values = await store.settings(tx.conn)
        values = {**values, "person_monthly": person, "site_monthly": site}
        await store.put_settings(tx.conn, values, tx.now)
        await tx.record(
            principal.actor(),
            "assistant.budget_updated",
            "assistant",
            "budget",
            {"personMonthly": person, "siteMonthly": site},
        )
    return await overview(ctx)
