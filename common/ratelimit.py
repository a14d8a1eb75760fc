"""Rate limits whose budget every gateway process shares.

Fixed windows counted in one UNLOGGED Postgres table: a hit is a single
upsert, so N processes behind a load balancer spend one budget per key, and a
restart forgets nothing that matters. Keys say what they limit
(``mail:principal:42``, ``cms:login-ip:203.0.113.9``). Time comes from the
injectable clock, so tests move it instead of sleeping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from common.clock import Clock
from common.db import Database

SWEEP_JOB = "common.rate_limit_sweep"
KEEP_WINDOWS_FOR = timedelta(hours=1)


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    # Seconds until the current window ends and the budget refills.
    reset_seconds: int

    @property
    def retry_after(self) -> int:
        return max(1, self.reset_seconds)

    def headers(self) -> dict[str, str]:
        """The draft IETF RateLimit headers, plus Retry-After when refused."""
        out = {
            "ratelimit-limit": str(self.limit),
            "ratelimit-remaining": str(self.remaining),
            "ratelimit-reset": str(self.reset_seconds),
        }
        if not self.allowed:
            out["retry-after"] = str(self.retry_after)
        return out


class RateLimiter:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock

    async def hit(self, key: str, limit: int, window_seconds: float = 1.0) -> Decision:
        """Count one request against ``key``; allowed while within ``limit`` per window."""
        now = self.clock.now()
        start_ts = math.floor(now.timestamp() / window_seconds) * window_seconds
        window_start = datetime.fromtimestamp(start_ts, UTC)
        hits = await self.db.fetch_val(
            "INSERT INTO common.rate_limits (key, window_start, hits) VALUES (%s, %s, 1)"
            " ON CONFLICT (key, window_start)"
            " DO UPDATE SET hits = common.rate_limits.hits + 1 RETURNING hits",
            (key, window_start),
        )
        reset = max(1, math.ceil(start_ts + window_seconds - now.timestamp()))
        return Decision(
            allowed=hits <= limit,
            limit=limit,
            remaining=max(0, limit - hits),
            reset_seconds=reset,
        )

    async def exhausted(self, key: str, limit: int, window_seconds: float = 1.0) -> bool:
        """Whether ``key`` is already past ``limit`` in this window, without counting.

        For budgets of failures (SMTP AUTH): the attempt is checked before the
        password is, and only a failure is counted with :meth:`hit`.
        """
        return not (await self.peek(key, limit, window_seconds)).allowed

    async def peek(self, key: str, limit: int, window_seconds: float = 1.0) -> Decision:
        """The budget of ``key`` in the current window, without spending any of it.

        For limits that count failures only (a JMAP client authenticates every
        request): ask first, ``hit`` when the attempt failed.
        """
        now = self.clock.now()
        start_ts = math.floor(now.timestamp() / window_seconds) * window_seconds
        hits = await self.db.fetch_val(
            "SELECT hits FROM common.rate_limits WHERE key = %s AND window_start = %s",
            (key, datetime.fromtimestamp(start_ts, UTC)),
        )
        hits = int(hits or 0)
        reset = max(1, math.ceil(start_ts + window_seconds - now.timestamp()))
        return Decision(
            allowed=hits < limit, limit=limit, remaining=max(0, limit - hits), reset_seconds=reset
        )

    async def sweep(self) -> int:
        return await self.db.execute(
            "DELETE FROM common.rate_limits WHERE window_start < %s",
            (self.clock.now() - KEEP_WINDOWS_FOR,),
        )
