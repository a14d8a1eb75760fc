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


async def test_a_bucket_allows_its_burst_then_its_rate(db, clock):
    limiter = RateLimiter(db, clock)
    decisions = [await limiter.take("bucket", 10, 20) for _ in range(21)]
    assert [d.allowed for d in decisions] == [True] * 20 + [False]
    assert [d.remaining for d in decisions[:3]] == [19, 18, 17]
    refused = decisions[-1].headers()
    assert refused["retry-after"] == "1" and refused["ratelimit-policy"] == "10;w=1;burst=20"
    # A refusal spends nothing: a tenth of a second later exactly one passes.
    clock.advance(0.1)
    assert [(await limiter.take("bucket", 10, 20)).allowed for _ in range(2)] == [True, False]
    # Half a second refills five, not the whole bucket.
    clock.advance(0.5)
    assert [(await limiter.take("bucket", 10, 20)).allowed for _ in range(6)] == [True] * 5 + [
        False
    ]


async def test_a_clock_stepping_back_does_not_lock_the_bucket(db, clock):
    limiter = RateLimiter(db, clock)
    assert all([(await limiter.take("stepped", 10, 20)).allowed for _ in range(20)])
    assert not (await limiter.take("stepped", 10, 20)).allowed
    # The clock steps back a day: what was spent is further ahead than any
    # bucket reaches, so it counts as full, not as a day's wait.
    clock.advance(-86400)
    assert [(await limiter.take("stepped", 10, 20)).allowed for _ in range(21)] == [True] * 20 + [
        False
    ]


async def test_a_slow_rate_says_when_to_come_back(db, clock):
    limiter = RateLimiter(db, clock)
    assert (await limiter.take("slow", 0.5, 1)).allowed
    refused = await limiter.take("slow", 0.5, 1)
    assert not refused.allowed and refused.headers()["retry-after"] == "2"
    clock.advance(1.9)
    assert not (await limiter.take("slow", 0.5, 1)).allowed
    clock.advance(0.1)
    assert (await limiter.take("slow", 0.5, 1)).allowed


async def test_two_processes_share_one_bucket(db, clock, database_url):
    from common.db import Database

    other_db = await Database.connect(database_url, size=1)
    try:
        a, b = RateLimiter(db, clock), RateLimiter(other_db, clock)
        results = [await (a if i % 2 else b).take("shared-bucket", 1, 4) for i in range(6)]
        assert [r.allowed for r in results] == [True] * 4 + [False] * 2
    finally:
        await other_db.close()


async def test_sweep_forgets_full_buckets_only(db, clock):
    limiter = RateLimiter(db, clock)
    await limiter.take("refilled", 10, 20)
    clock.advance(1)
    for _ in range(20):
        await limiter.take("busy", 10, 20)
    assert await limiter.sweep() == 1
    assert await db.fetch_val("SELECT key FROM common.rate_buckets") == "busy"
    # Forgetting a full bucket changes nothing: it starts full again.
    assert (await limiter.take("refilled", 10, 20)).remaining == 19
