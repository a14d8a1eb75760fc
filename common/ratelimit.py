"""Rate limits whose budget every gateway process shares.

Two kinds, each in one UNLOGGED Postgres table, each spent by a single
upsert, so N processes behind a load balancer spend one budget per key, and a
restart forgets nothing that matters:

- :meth:`RateLimiter.hit` counts attempts in fixed windows (``limit`` per
  ``window_seconds``): for budgets of failures and of slow things (sign-in
  codes per 15 minutes, recovery links per hour).
- :meth:`RateLimiter.take` is a token bucket for request rates: ``rate`` per
  second sustained, and up to ``burst`` at once after a quiet moment. It is
  kept as GCRA (the generic cell rate algorithm, as redis-cell and
  Shopify's leaky bucket): one integer per key, the time at which the bucket
  would be full again, so a request is one conditional upsert.

Keys say what they limit (``mail:account:42``, ``cms:login-ip:203.0.113.9``).
Time comes from the injectable clock, so tests move it instead of sleeping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from common.clock import Clock
from common.db import Database

SWEEP_JOB = "common.rate_limit_sweep"
KEEP_WINDOWS_FOR = timedelta(hours=1)
MICROSECONDS = 1_000_000


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    # Seconds until the budget is whole again (the window ends, the bucket is full).
    reset_seconds: int
    # Seconds until one more request would pass, when that is sooner than the reset
    # (a token bucket refills a little at a time); None: at the reset.
    wait_seconds: int | None = None
    # The RateLimit-Policy value, for a budget whose shape the three numbers do not say.
    policy: str | None = None

    @property
    def retry_after(self) -> int:
        wait = self.reset_seconds if self.wait_seconds is None else self.wait_seconds
        return max(1, wait)

    def headers(self) -> dict[str, str]:
        """The draft IETF RateLimit headers, plus Retry-After when refused."""
        out = {
            "ratelimit-limit": str(self.limit),
            "ratelimit-remaining": str(self.remaining),
            "ratelimit-reset": str(self.reset_seconds),
        }
        if self.policy is not None:
            out["ratelimit-policy"] = self.policy
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

    async def take(self, key: str, rate: float, burst: int) -> Decision:
        """Spend one request of ``key``'s bucket: ``rate`` per second, ``burst`` at once.

        The bucket holds ``burst`` requests and gains one every ``1 / rate``
        seconds. Refused requests spend nothing. The decision's limit is the
        bucket (what may be sent at once), its remaining what is left of it
        now, its reset the seconds until it is full, and Retry-After the
        seconds until the next request passes; RateLimit-Policy says both
        numbers (``10;w=1;burst=20``).
        """
        burst = max(1, burst)
        step = max(1, round(MICROSECONDS / rate))  # one request's worth of time
        depth = burst * step  # how far ahead of now the bucket may be spent
        now = round(self.clock.now().timestamp() * MICROSECONDS)
        # A stored time further ahead than a full bucket reaches can only come
        # from a clock that stepped back (NTP, a restored VM): it counts as a
        # full bucket, or every principal would be locked out until the clock
        # caught up again.
        start = (
            "(CASE WHEN b.tat > %(now)s + %(depth)s THEN %(now)s ELSE greatest(b.tat, %(now)s) END)"
        )
        tat = await self.db.fetch_val(
            "INSERT INTO common.rate_buckets AS b (key, tat) VALUES (%(key)s, %(now)s + %(step)s)"
            f" ON CONFLICT (key) DO UPDATE SET tat = {start} + %(step)s"
            f" WHERE {start} + %(step)s <= %(now)s + %(depth)s"
            " RETURNING tat",
            {"key": key, "now": now, "step": step, "depth": depth},
        )
        allowed = tat is not None
        if not allowed:
            tat = await self.db.fetch_val(
                "SELECT tat FROM common.rate_buckets WHERE key = %s", (key,)
            )
            tat = max(int(tat if tat is not None else now), now)
        ahead = max(0, int(tat) - now)
        wait = max(0, int(tat) + step - depth - now)
        return Decision(
            allowed=allowed,
            limit=burst,
            remaining=max(0, (depth - ahead) // step),
            reset_seconds=math.ceil(ahead / MICROSECONDS),
            wait_seconds=math.ceil(wait / MICROSECONDS),
            policy=f"{_number(rate)};w=1;burst={burst}",
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
        """Forget old windows, and buckets that are full again (as good as no row)."""
        windows = await self.db.execute(
            "DELETE FROM common.rate_limits WHERE window_start < %s",
            (self.clock.now() - KEEP_WINDOWS_FOR,),
        )
        now = round(self.clock.now().timestamp() * MICROSECONDS)
        buckets = await self.db.execute("DELETE FROM common.rate_buckets WHERE tat <= %s", (now,))
        return windows + buckets


def _number(rate: float) -> str:
    return str(int(rate)) if float(rate).is_integer() else f"{rate:g}"
