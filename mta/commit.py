"""Group commit: deliveries that arrive together share one transaction.

Every accepted message must be committed before its 250, and a commit costs
an fsync. One drainer runs at a time: while its transaction commits, new
deliveries queue up, and the next transaction takes them all (up to
MAX_BATCH). Under load the fsync is shared by many messages; alone, a message
commits at once, with no added wait (PostgreSQL's own group commit works the
same way).

If a batch fails, each of its deliveries is retried in a transaction of its
own, so one bad message never costs the others their delivery.

Mailbox counts and quota usage of a batch are queued as one row in its last
statement, with its raw messages, activity and event rows, and applied right
after its COMMIT, before its 250s (mta/store/counters.py): the counter rows
every message of one mailbox touches are locked for one short statement whose
commit waits for no fsync, never across a batch's COMMIT.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from common.db import Conn, Database
from mta.store import counters

log = logging.getLogger(__name__)

MAX_BATCH = 64
Work = Callable[[Conn], Awaitable[Any]]


class GroupCommit:
    def __init__(self, db: Database, *, max_batch: int = MAX_BATCH) -> None:
        self.db = db
        self.max_batch = max_batch
        self._queue: list[tuple[Work, asyncio.Future[Any]]] = []
        self._drainer: asyncio.Task[None] | None = None

    async def run(self, work: Work) -> Any:
        """Run ``work(conn)`` inside a committed transaction; return its result."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append((work, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain(), name="mta-group-commit")
        # shield: a client hanging up must not cancel a commit others share.
        return await asyncio.shield(future)

    async def _drain(self) -> None:
        while self._queue:
            batch = self._queue[: self.max_batch]
            del self._queue[: self.max_batch]
            try:
                results = []
                async with self.db.transaction() as conn, counters.deferred(conn) as done:
                    for work, _future in batch:
                        results.append(await work(conn))
                if done.pending:
                    await counters.apply_pending(self.db)
            except Exception as exc:
                if len(batch) == 1:
                    _fail(batch[0][1], exc)
                    continue
                log.warning(
                    "a batch of %d deliveries failed (%s); retrying one by one", len(batch), exc
                )
                for work, future in batch:
                    try:
                        async with self.db.transaction() as conn, counters.deferred(conn) as one:
                            result = await work(conn)
                        if one.pending:
                            await counters.apply_pending(self.db)
                    except Exception as item_exc:
                        _fail(future, item_exc)
                    else:
                        _settle(future, result)
                continue
            for (_work, future), result in zip(batch, results, strict=True):
                _settle(future, result)


def _settle(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
