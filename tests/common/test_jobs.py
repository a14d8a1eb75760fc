from __future__ import annotations

import asyncio
from collections import Counter

from common.jobs import JobQueue


async def test_two_workers_never_run_the_same_job(db, clock):
    ran: Counter[int] = Counter()

    async def handler(job):
        await asyncio.sleep(0)  # let the other worker interleave
        ran[job.payload["n"]] += 1

    workers = [JobQueue(db, clock, worker_id=f"w{i}") for i in range(2)]
    for w in workers:
        w.register("demo", handler)
    for n in range(40):
        await workers[0].enqueue("demo", {"n": n})

    async def drain(w):
        total = 0
        while n := await w.run_due(limit=3):
            total += n
        return total

    counts = await asyncio.gather(*(drain(w) for w in workers))
    assert sum(counts) == 40
    assert ran == Counter({n: 1 for n in range(40)})


async def test_failed_job_runs_again_after_backoff(db, clock):
    calls = []

    async def flaky(job):
        calls.append(clock.now())
        if len(calls) == 1:
            raise RuntimeError("temporary")

    q = JobQueue(db, clock)
    q.register("flaky", flaky)
    await q.enqueue("flaky", {})
    assert await q.run_due() == 1
    row = await db.fetch_one("SELECT state, attempts, last_error FROM common.jobs")
    assert row == {"state": "pending", "attempts": 1, "last_error": "RuntimeError: temporary"}
    # Not yet: the retry waits for its backoff.
    assert await q.run_due() == 0
    clock.advance(10)
    assert await q.run_due() == 1
    assert len(calls) == 2
    assert await db.fetch_val("SELECT state FROM common.jobs") == "done"


async def test_job_is_dead_after_max_attempts(db, clock):
    async def broken(job):
        raise ValueError("always")

    q = JobQueue(db, clock)
    q.register("broken", broken)
    await q.enqueue("broken", {}, max_attempts=3)
    for _ in range(3):
        await q.run_due()
        clock.advance(3600)
    row = await db.fetch_one("SELECT state, attempts FROM common.jobs")
    assert row == {"state": "dead", "attempts": 3}
    assert await q.run_due() == 0


async def test_same_key_enqueued_twice_runs_once(db, clock):
    ran = []

    async def handler(job):
        ran.append(job.id)

    q = JobQueue(db, clock)
    q.register("once", handler)
    first = await q.enqueue("once", {}, key="publish:42")
    second = await q.enqueue("once", {}, key="publish:42")
    assert first is not None and second is None
    await q.run_due()
    await q.enqueue("once", {}, key="publish:42")  # even after it ran
    await q.run_due()
    assert ran == [first]


async def test_future_job_waits_for_its_time(db, clock):
    ran = []

    async def handler(job):
        ran.append(job.id)

    q = JobQueue(db, clock)
    q.register("later", handler)
    await q.enqueue("later", {}, delay=60)
    assert await q.run_due() == 0
    clock.advance(61)
    assert await q.run_due() == 1


async def test_job_of_a_dead_worker_is_claimed_after_its_lease(db, clock):
    async def handler(job):
        pass

    dead = JobQueue(db, clock, worker_id="dead")
    alive = JobQueue(db, clock, worker_id="alive")
    for q in (dead, alive):
        q.register("work", handler)
    await dead.enqueue("work", {})
    assert len(await dead.claim()) == 1  # claimed, then the worker "dies"
    assert await alive.run_due() == 0
    clock.advance(301)
    assert await alive.run_due() == 1
    assert await db.fetch_val("SELECT state FROM common.jobs") == "done"


async def test_recurring_job_runs_once_per_period_across_workers(db, clock):
    ran = []

    async def sweep(job):
        ran.append(job.key)

    workers = [JobQueue(db, clock, worker_id=f"w{i}") for i in range(2)]
    for w in workers:
        w.register("sweep", sweep, every=3600)
    await asyncio.gather(*(w.run_due() for w in workers))
    await asyncio.gather(*(w.run_due() for w in workers))
    assert len(ran) == 1
    clock.advance(3600)
    await asyncio.gather(*(w.run_due() for w in workers))
    assert len(ran) == 2
