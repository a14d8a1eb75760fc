"""A job queue on a Postgres table.

Enqueue inside the caller's own transaction (so a job exists exactly when the
change that asked for it committed). Workers claim due jobs with
``FOR UPDATE SKIP LOCKED`` and hold them under a lease: two workers never run
the same job, and a job whose worker died is claimed again once its lease
lapses. A failing handler is retried with exponential backoff and marked dead
after ``max_attempts``. Handlers must be idempotent: a crash after the work but
before the bookkeeping runs the job again.

Time comes from the injectable clock, so tests move the clock and call
:meth:`JobQueue.run_due` instead of sleeping.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from common import metrics
from common.clock import Clock
from common.db import Conn, Database, Json, execute, fetch_all, fetch_val
from common.ids import short_id
from common.logs import current_request_id, new_request_id, reset_request_id, set_request_id

log = logging.getLogger(__name__)

DEFAULT_MAX_ATTEMPTS = 8
BACKOFF_BASE_SECONDS = 5.0
BACKOFF_CAP_SECONDS = 3600.0
LEASE_SECONDS = 300.0


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    payload: dict[str, Any]
    attempts: int
    max_attempts: int
    run_at: datetime
    key: str | None
    request_id: str | None = None


Handler = Callable[[Job], Awaitable[None]]


def backoff_seconds(attempts: int, *, jitter: bool = True) -> float:
    """Delay before try ``attempts + 1``: 5 s, 10 s, 20 s ... capped at an hour."""
    delay = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** max(0, attempts - 1))
    return delay * random.uniform(0.8, 1.2) if jitter else delay  # noqa: S311 - jitter, not a secret


async def enqueue(
    conn: Conn,
    kind: str,
    payload: dict[str, Any] | None = None,
    *,
    run_at: datetime,
    key: str | None = None,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    request_id: str | None = None,
) -> int | None:
    """Add a job; return its id, or None when a job with ``key`` already exists.

    ``request_id`` (by default the current one, common/logs.py) goes with it,
    so the job's log lines, and what it sends, name the request that caused it.
    """
    return await fetch_val(
        conn,
        "INSERT INTO common.jobs (kind, payload, run_at, key, max_attempts, request_id)"
        " VALUES (%s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (key) DO NOTHING RETURNING id",
        (kind, Json(payload or {}), run_at, key, max_attempts, request_id or current_request_id()),
    )


async def cancel(conn: Conn, key: str) -> bool:
    """Drop a pending job by its key (for example a rescheduled publication)."""
    n = await execute(conn, "DELETE FROM common.jobs WHERE key = %s AND state = 'pending'", (key,))
    return n > 0


class JobQueue:
    def __init__(self, db: Database, clock: Clock, *, worker_id: str | None = None) -> None:
        self.db = db
        self.clock = clock
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{short_id(4)}"
        self._handlers: dict[str, Handler] = {}
        self._recurring: dict[str, float] = {}
        # The last slot this process enqueued per recurring kind: the worker
        # polls every second, and an insert per kind per poll is wasted work.
        self._enqueued_slot: dict[str, int] = {}

    # --- registration (before start) ---

    def register(self, kind: str, handler: Handler, *, every: float | None = None) -> None:
        """The one way a package declares a job kind: its handler, and its period if recurring.

        ``every``: run ``kind`` once per that many seconds across all
        processes (each period's job is keyed by its time slot).
        """
        if kind in self._handlers:
            raise ValueError(f"a handler for job kind {kind!r} is already registered")
        self._handlers[kind] = handler
        if every is not None:
            self._recurring[kind] = every

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(self._handlers)

    @property
    def recurring(self) -> frozenset[str]:
        """The kinds registered with a period."""
        return frozenset(self._recurring)

    # --- producing ---

    async def enqueue(
        self,
        kind: str,
        payload: dict[str, Any] | None = None,
        *,
        run_at: datetime | None = None,
        delay: float = 0,
        key: str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    ) -> int | None:
        when = run_at or self.clock.now() + timedelta(seconds=delay)
        async with self.db.connection() as conn:
            return await enqueue(
                conn, kind, payload, run_at=when, key=key, max_attempts=max_attempts
            )

    async def schedule_recurring(self) -> None:
        now = self.clock.now()
        for kind, period in self._recurring.items():
            slot = int(now.timestamp() // period)
            if self._enqueued_slot.get(kind) == slot:
                continue
            await self.enqueue(kind, {}, run_at=now, key=f"every:{kind}:{slot}", max_attempts=3)
            self._enqueued_slot[kind] = slot

    # --- consuming ---

    async def claim(self, limit: int = 10) -> list[Job]:
        now = self.clock.now()
        async with self.db.connection() as conn:
            rows = await fetch_all(
                conn,
                """
                UPDATE common.jobs AS j
                   SET state = 'running', attempts = j.attempts + 1,
                       locked_by = %(me)s, locked_until = %(lease)s
                 WHERE j.id IN (
                       SELECT id FROM common.jobs
                        WHERE kind = ANY(%(kinds)s)
                          AND ((state = 'pending' AND run_at <= %(now)s)
                            OR (state = 'running' AND locked_until < %(now)s))
                        ORDER BY run_at
                        LIMIT %(limit)s
                        FOR UPDATE SKIP LOCKED)
                RETURNING j.id, j.kind, j.payload, j.attempts, j.max_attempts, j.run_at, j.key,
                          j.request_id
                """,
                {
                    "me": self.worker_id,
                    "lease": now + timedelta(seconds=LEASE_SECONDS),
                    "kinds": list(self._handlers),
                    "now": now,
                    "limit": limit,
                },
            )
        return [Job(**row) for row in rows]

    async def run_job(self, job: Job) -> bool:
        """Run one claimed job; return True when it succeeded."""
        handler = self._handlers[job.kind]
        # The job runs under its request's id, or one of its own (recurring jobs).
        token = set_request_id(job.request_id or new_request_id())
        try:
            await handler(job)
        except asyncio.CancelledError:
            # Shutting down: hand the job back untouched for another worker.
            await self._release(job)
            raise
        except Exception as exc:
            await self._failed(job, exc)
            return False
        finally:
            reset_request_id(token)
        metrics.JOB_RUNS.labels(job.kind, "done").inc()
        await self.db.execute(
            "UPDATE common.jobs SET state = 'done', finished_at = %s, locked_by = NULL,"
            " locked_until = NULL, last_error = NULL WHERE id = %s AND locked_by = %s",
            (self.clock.now(), job.id, self.worker_id),
        )
        return True

    async def _release(self, job: Job) -> None:
        await self.db.execute(
            "UPDATE common.jobs SET state = 'pending', attempts = attempts - 1,"
            " locked_by = NULL, locked_until = NULL WHERE id = %s AND locked_by = %s",
            (job.id, self.worker_id),
        )

    async def _failed(self, job: Job, exc: Exception) -> None:
        message = f"{type(exc).__name__}: {exc}"[:2000]
        now = self.clock.now()
        if job.attempts >= job.max_attempts:
            log.error(
                "job %s (%s) is dead after %s tries: %s", job.id, job.kind, job.attempts, message
            )
            metrics.JOB_RUNS.labels(job.kind, "dead").inc()
            metrics.JOB_DEAD.labels(job.kind).inc()
            await self.db.execute(
                "UPDATE common.jobs SET state = 'dead', last_error = %s, finished_at = %s,"
                " locked_by = NULL, locked_until = NULL WHERE id = %s",
                (message, now, job.id),
            )
            return
        retry_at = now + timedelta(seconds=backoff_seconds(job.attempts))
        log.warning("job %s (%s) failed, retry at %s: %s", job.id, job.kind, retry_at, message)
        metrics.JOB_RUNS.labels(job.kind, "retry").inc()
        metrics.JOB_RETRIES.labels(job.kind).inc()
        await self.db.execute(
            "UPDATE common.jobs SET state = 'pending', last_error = %s, run_at = %s,"
            " locked_by = NULL, locked_until = NULL WHERE id = %s",
            (message, retry_at, job.id),
        )

    async def run_due(self, limit: int = 50) -> int:
        """Claim and run every due job (up to ``limit``); return how many ran."""
        if not self._handlers:
            return 0
        await self.schedule_recurring()
        jobs = await self.claim(limit)
        for job in jobs:
            await self.run_job(job)
        return len(jobs)

    async def run_forever(self, poll_seconds: float = 1.0) -> None:
        """The worker loop the gateway runs; cancel it to stop."""
        while True:
            try:
                ran = await self.run_due()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("job worker iteration failed")
                ran = 0
            if not ran:
                await asyncio.sleep(poll_seconds)


async def purge_finished(db: Database, before: datetime) -> int:
    """Forget finished jobs (done; dead ones stay for an operator to read).

    Done jobs with an idempotency key are kept as long as the caller's key
    could still be reused: only keys of recurring slots are purged.
    """
    return await db.execute(
        "DELETE FROM common.jobs WHERE state = 'done' AND finished_at < %s"
        " AND (key IS NULL OR key LIKE 'every:%%')",
        (before,),
    )
