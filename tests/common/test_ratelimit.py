from __future__ import annotations

from common.ratelimit import RateLimiter


async def test_budget_is_spent_then_refused_with_headers(db, clock):
    limiter = RateLimiter(db, clock)
    decisions = [await limiter.hit("login:1.2.3.4", 5, 1.0) for _ in range(6)]
    assert [d.allowed for d in decisions] == [True] * 5 + [False]
    assert decisions[0].remaining == 4
    refused = decisions[-1].headers()
    assert refused["ratelimit-limit"] == "5"
    assert refused["ratelimit-remaining"] == "0"
    assert int(refused["retry-after"]) >= 1


async def test_window_refills_when_the_clock_moves(db, clock):
    limiter = RateLimiter(db, clock)
    for _ in range(3):
        await limiter.hit("k", 2, 1.0)
    clock.advance(1)
    assert (await limiter.hit("k", 2, 1.0)).allowed


async def test_two_processes_share_one_budget(db, clock, database_url):
    from common.db import Database

    other_db = await Database.connect(database_url, size=1)
    try:
        a, b = RateLimiter(db, clock), RateLimiter(other_db, clock)
        results = [await (a if i % 2 else b).hit("shared", 4, 1.0) for i in range(6)]
        assert [r.allowed for r in results] == [True] * 4 + [False] * 2
    finally:
        await other_db.close()


async def test_sweep_forgets_old_windows(db, clock):
    limiter = RateLimiter(db, clock)
    await limiter.hit("old", 1, 1.0)
    clock.advance(7200)
    await limiter.hit("new", 1, 1.0)
    assert await limiter.sweep() == 1
    assert await db.fetch_val("SELECT count(*) FROM common.rate_limits") == 1
