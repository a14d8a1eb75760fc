"""The mta as the gateway runs it: the SMTP daemons and the outbound worker in its process.

``MtaService(runtime).lifespan()`` listens on SMTP_PORT (unless SMTP_ENABLED
is false, which a pure API node sets with RUN_WORKERS=false), on the
submission ports (SUBMISSION_ENABLED), on the IMAP ports (IMAP_ENABLED), the
POP3 ports (POP3_ENABLED) and SIEVE_PORT (SIEVE_ENABLED), and works the
outbound queue (OUTBOUND_ENABLED) for as long as the gateway runs. ``python -m
mta smtp``, ``submission``, ``imap``, ``pop3``, ``managesieve`` and
``outbound`` run each alone.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from datetime import timedelta

from common.jobs import Job
from common.runtime import Runtime
from mta.context import MtaContext
from mta.imap import server as imap
from mta.managesieve import server as managesieve
from mta.outbound.worker import OutboundWorker
from mta.pop3 import server as pop3
from mta.smtp import server
from mta.store import activity, blobrefs, counters
from mta.store.batch import WORDS_JOB
from mta.submission import server as submission

PRUNE_JOB = "mta.prune_activity"
PRUNE_EVERY_SECONDS = 3600
COLLECT_JOB = "mta.collect_blobs"
COLLECT_EVERY_SECONDS = 3600
COLLECT_BATCH = 1000
# The queue is woken by NOTIFY at each enqueue; this job also drains it in a
# process that missed one (or that runs jobs but not the worker loop).
OUTBOUND_JOB = "mta.outbound"
OUTBOUND_EVERY_SECONDS = 60
INDEX_JOB = WORDS_JOB
INDEX_EVERY_SECONDS = 60


class MtaService:
    name = "mta"

    def __init__(self, runtime: Runtime, ctx: MtaContext | None = None) -> None:
        self.runtime = runtime
        self.ctx = ctx or MtaContext.build(runtime)
        self.smtp: asyncio.Server | None = None
        self.submission: list[asyncio.Server] = []
        self.imap: list[asyncio.Server] = []
        self.access: list[asyncio.Server] = []
        self.started = False
        self.outbound = OutboundWorker(self.ctx)
        if PRUNE_JOB not in runtime.jobs.kinds:
            runtime.jobs.register(PRUNE_JOB, self._prune, every=PRUNE_EVERY_SECONDS)
        if COLLECT_JOB not in runtime.jobs.kinds:
            runtime.jobs.register(COLLECT_JOB, self._collect, every=COLLECT_EVERY_SECONDS)
        if OUTBOUND_JOB not in runtime.jobs.kinds and self.ctx.config.outbound_enabled:
            runtime.jobs.register(OUTBOUND_JOB, self._outbound, every=OUTBOUND_EVERY_SECONDS)
        if INDEX_JOB not in runtime.jobs.kinds:
            runtime.jobs.register(INDEX_JOB, self._index_bodies, every=INDEX_EVERY_SECONDS)

    async def _prune(self, job: Job) -> None:
        keep = timedelta(days=self.ctx.config.activity_days)
        async with self.runtime.db.connection() as conn:
            await activity.prune(conn, self.runtime.clock.now() - keep)

    async def _collect(self, job: Job) -> None:
        await collect_blobs(self.ctx)

    async def _outbound(self, job: Job) -> None:
        await self.outbound.drain()

    async def _index_bodies(self, job: Job) -> None:
        # Imported here: the JMAP Email package is not needed to run SMTP alone.
        from mta.jmap.email.backlog import BATCH, index_bodies

        # Counts a crashed daemon left pending (every delivery applies them too).
        await counters.apply_pending(self.runtime.db)
        # Up to 2,000 a run: each second of deliveries enqueues a run (the group
        # commit), and the minute's run catches what one left; a large old
        # mailbox is searchable within the hour without holding a connection long.
        async with self.runtime.db.connection() as conn:
            for _ in range(10):
                if await index_bodies(conn, self.ctx.blobs) < BATCH:
                    break

    def lifespan(self) -> AbstractAsyncContextManager[None] | None:
        if self.lifespan_unused():
            return None
        return self._run()

    def listening(self) -> bool:
        """Each enabled listener accepts connections (the gateway's /readyz)."""
        if self.lifespan_unused():
            return True
        servers = [
            *([self.smtp] if self.smtp is not None else []),
            *self.submission,
            *self.imap,
            *self.access,
        ]
        return self.started and all(s.is_serving() for s in servers)

    def lifespan_unused(self) -> bool:
        config = self.ctx.config
        return not (
            config.smtp_enabled
            or config.submission_enabled
            or config.outbound_enabled
            or config.imap_enabled
            or config.pop3_enabled
            or config.sieve_enabled
        )

    @asynccontextmanager
    async def _run(self) -> AsyncIterator[None]:
        config = self.ctx.config
        async with AsyncExitStack() as stack:
            if config.smtp_enabled:
                self.smtp = await stack.enter_async_context(server.serve(self.ctx))
            if config.submission_enabled:
                self.submission = await stack.enter_async_context(submission.serve(self.ctx))
            if config.imap_enabled:
                self.imap = await stack.enter_async_context(imap.serve(self.ctx))
            if config.pop3_enabled:
                self.access += await stack.enter_async_context(pop3.serve(self.ctx))
            if config.sieve_enabled:
                self.access += await stack.enter_async_context(managesieve.serve(self.ctx))
            if config.outbound_enabled:
                stack.push_async_callback(_stop, asyncio.create_task(self.outbound.run()))
            self.started = True
            try:
                yield
            finally:
                self.started = False
                self.smtp = None
                self.submission = []
                self.imap = []
                self.access = []


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def collect_blobs(ctx: MtaContext, *, batch: int = COLLECT_BATCH) -> int:
    """Delete the raw MIME of deleted mail; return how many blobs were removed."""
    removed = 0
    async with ctx.runtime.db.connection() as conn:
        await blobrefs.referenced_candidates(conn)
        while ids := await blobrefs.unreferenced(conn, batch):
            for blob_id in ids:
                removed += await ctx.blobs.delete(blob_id)
            await blobrefs.forget(conn, ids)
            if len(ids) < batch:
                break
    return removed
