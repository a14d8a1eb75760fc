"""The gateway's own recurring jobs: forget old rate-limit windows and finished jobs."""

from __future__ import annotations

from datetime import timedelta

from common.jobs import Job, purge_finished
from common.ratelimit import RateLimiter
from common.runtime import Runtime

SWEEP_JOB = "common.sweep"
SWEEP_EVERY_SECONDS = 600
KEEP_DONE_JOBS = timedelta(days=7)


def register(runtime: Runtime) -> None:
    async def sweep(job: Job) -> None:
        await RateLimiter(runtime.db, runtime.clock).sweep()
        await purge_finished(runtime.db, runtime.clock.now() - KEEP_DONE_JOBS)

    runtime.jobs.register(SWEEP_JOB, sweep, every=SWEEP_EVERY_SECONDS)
