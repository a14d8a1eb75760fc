"""The database layer: an aiopg pool, transactions and small query helpers.

SQL lives next to the code that owns each table; those functions take the
connection as their first argument so one transaction can span several of
them. aiopg connections are always in autocommit mode, so a transaction is an
explicit BEGIN/COMMIT on one pooled connection.

Two places go below aiopg's public API, because they ran on every statement
of every request and cost more than the statement's own round trip in Python
(measured with ``benchmarks/db_overhead.py``; see docs/performance.md):

- the pool (:class:`LeanPool`) hands out an idle connection and takes it back
  without its timeout scope, condition lock and wake-up task, and when it is
  full hands a released connection straight to the next task queued;
- the helpers below run statements on one reusable psycopg2 cursor per
  connection and wait on aiopg's own readiness callback (:func:`_run`),
  instead of an aiopg Cursor (two objects) and a ``wait_for`` per statement.

Both use aiopg 1.4.0 internals (the version is pinned in requirements/).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import aiopg
import psycopg2
import psycopg2.errors
import psycopg2.extensions
import psycopg2.extras

from common import metrics
from common.crypto import sha256_hex

log = logging.getLogger(__name__)

Conn = aiopg.Connection
Params = Sequence[Any] | Mapping[str, Any] | None

# Hand Python dicts and lists to jsonb columns through psycopg2.extras.Json.
Json = psycopg2.extras.Json

POOL_TIMEOUT = 30.0  # seconds to wait for a connection
STATEMENT_TIMEOUT = 30.0  # seconds to wait for a statement's answer
# A cursor that held a result this large is dropped rather than kept for the
# next statement, so a pooled connection does not pin a big result in memory.
_KEEP_CURSOR_ROWS = 1000


class LeanPool(aiopg.Pool):
    """aiopg's pool, with cheaper checkouts when it is idle and when it is full.

    aiopg's acquire enters a timeout scope and a condition lock, and its
    release schedules a wake-up task that the releasing request then awaits:
    about 60 microseconds of CPU per checkout, more than a short statement's
    own cost. Two cases skip that:

    - nobody waits: an idle connection is taken and put back directly;
    - the pool is full: the task queues a future of its own, and a release
      hands its connection straight to the first one queued (first come,
      first served), without the connection passing through the free list.

    Everything else (opening a connection while the pool grows, a connection
    that comes back closed or mid-transaction, closing) is aiopg's own path;
    a task waiting there on aiopg's condition is always served before the
    queue, so it cannot starve behind it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._queue: deque[asyncio.Future[aiopg.Connection | None]] = deque()
        self._done: asyncio.Future[None] | None = None

    def _aiopg_waiters(self) -> bool:
        return bool(self._cond._waiters)  # type: ignore[attr-defined]

    async def _acquire(self) -> aiopg.Connection:
        while True:
            if self._closing:
                raise RuntimeError("Cannot acquire connection after closing pool")
            if self._free and not self._queue and not self._aiopg_waiters():
                # The most recently used: its backend has this work's catalog
                # and plans cached, and the pool's others stay idle.
                conn = self._free.pop()
                if conn.closed:
                    continue
                self._used.add(conn)
                return conn
            # From here on the checkout waits: for a new connection, or for a release.
            started = time.perf_counter()
            if self._free or self.size < (self.maxsize or 0):
                conn = await super()._acquire()
                metrics.DB_POOL_WAIT.observe(time.perf_counter() - started)
                return conn
            handed = await self._queued()
            metrics.DB_POOL_WAIT.observe(time.perf_counter() - started)
            if handed is not None:
                return handed
            # None: a connection was lost, so there is room to open one; go round.

    async def _queued(self) -> aiopg.Connection | None:
        waiter: asyncio.Future[aiopg.Connection | None] = self._loop.create_future()
        self._queue.append(waiter)
        try:
            async with asyncio.timeout(self._timeout):
                return await waiter
        except BaseException:
            # Handed a connection in the same instant the wait was given up.
            if waiter.done() and not waiter.cancelled() and waiter.exception() is None:
                handed = waiter.result()
                if handed is not None:
                    self.release(handed)
            raise
        finally:
            if waiter in self._queue:
                self._queue.remove(waiter)

    def _hand_over(self, conn: aiopg.Connection | None) -> bool:
        while self._queue:
            waiter = self._queue.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return True
        return False

    def _completed(self) -> asyncio.Future[None]:
        done = self._done
        if done is None:
            # One finished future, awaited by every fast release.
            done = self._done = self._loop.create_future()
            done.set_result(None)
        return done

    def release(self, conn: aiopg.Connection) -> asyncio.Future[None]:
        reusable = (
            not self._closing
            and conn in self._used
            and not conn.closed
            and conn.raw.info.transaction_status == psycopg2.extensions.TRANSACTION_STATUS_IDLE
        )
        if reusable and not self._aiopg_waiters():
            if self._hand_over(conn):  # it stays in use, by the next task
                return self._completed()
            self._used.remove(conn)
            self._free.append(conn)
            return self._completed()
        released = super().release(conn)
        if not reusable:
            # Lost to the pool: a queued task may open a new connection instead.
            self._hand_over(None)
        return released

    def close(self) -> None:
        super().close()
        while self._queue:
            waiter = self._queue.popleft()
            if not waiter.done():
                waiter.set_exception(RuntimeError("the pool is closing"))


class Database:
    """An aiopg pool with transaction and one-shot query helpers."""

    def __init__(self, pool: aiopg.Pool, dsn: str) -> None:
        self.pool = pool
        self.dsn = dsn

    @classmethod
    async def connect(cls, dsn: str, *, size: int = 5) -> Database:
        pool = await LeanPool.from_pool_fill(
            dsn,
            1,
            size,
            POOL_TIMEOUT,
            enable_json=True,
            enable_hstore=True,
            enable_uuid=True,
            echo=False,
            on_connect=None,
            pool_recycle=-1.0,
            # Every session works in UTC; times are timestamptz throughout. Prepared
            # statements (only ours: see Prepared) keep their generic plan: left to
            # choose, PostgreSQL re-planned a complex one on every execution (1.5 ms
            # per RCPT lookup) because its generic estimate looked dearer.
            options="-c timezone=UTC -c plan_cache_mode=force_generic_plan",
        )
        return cls(pool, dsn)

    async def close(self, timeout: float = 5.0) -> None:  # noqa: ASYNC109 - a bound, not a deadline
        """Close the pool; connections still held after ``timeout`` are cut."""
        self.pool.close()
        try:
            await asyncio.wait_for(self.pool.wait_closed(), timeout)
        except TimeoutError:
            # wait_closed() waits for every acquired connection to come back;
            # a task that never returns one must not keep the process alive.
            log.warning("closing the pool: connections still in use after %ss; cut", timeout)
            self.pool.terminate()
            await self.pool.wait_closed()

    def connection(self) -> AbstractAsyncContextManager[Conn]:
        """A pooled connection in autocommit mode: each statement commits.

        The pool's own context manager, not a generator wrapped around it: this
        runs for every statement a request makes.
        """
        return self.pool.acquire()  # type: ignore[return-value]

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Conn]:
        """A connection inside BEGIN ... COMMIT; an exception rolls it back."""
        async with self.pool.acquire() as conn, transaction(conn):
            yield conn

    async def fetch_one(self, sql: str, params: Params = None) -> dict[str, Any] | None:
        async with self.connection() as conn:
            return await fetch_one(conn, sql, params)

    async def fetch_all(self, sql: str, params: Params = None) -> list[dict[str, Any]]:
        async with self.connection() as conn:
            return await fetch_all(conn, sql, params)

    async def fetch_val(self, sql: str, params: Params = None) -> Any:
        async with self.connection() as conn:
            return await fetch_val(conn, sql, params)

    async def execute(self, sql: str, params: Params = None) -> int:
        async with self.connection() as conn:
            return await execute(conn, sql, params)

    async def ping(self) -> bool:
        try:
            return await self.fetch_val("SELECT 1") == 1
        except Exception:
            return False


@asynccontextmanager
async def transaction(conn: Conn) -> AsyncIterator[Conn]:
    """Run the block in a transaction on an already acquired connection."""
    await _run(conn, "BEGIN", None)
    try:
        yield conn
    except BaseException:
        if not conn.closed:
            await _run(conn, "ROLLBACK", None)
        raise
    else:
        await _run(conn, "COMMIT", None)


class _Session:
    """What this module keeps per pooled connection: its reusable cursor and
    the names of the statements prepared on it."""

    __slots__ = ("cursor", "prepared")

    def __init__(self) -> None:
        self.cursor: Any = None
        self.prepared: set[str] = set()


_sessions: weakref.WeakKeyDictionary[Conn, _Session] = weakref.WeakKeyDictionary()


def _session(conn: Conn) -> _Session:
    session = _sessions.get(conn)
    if session is None:
        session = _sessions[conn] = _Session()
    return session


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError("the database did not answer in time"))


async def _run(conn: Conn, sql: str, params: Params) -> Any:
    """Execute one statement; return the psycopg2 cursor holding its result.

    The statement goes out on the connection's reusable cursor and the wait
    is on aiopg's readiness callback (the same one its Cursor uses), bounded
    by STATEMENT_TIMEOUT. A statement that is cancelled or times out leaves
    the connection in an unknown state: it is closed, as aiopg does, and the
    pool replaces it.
    """
    session = _session(conn)
    cur = session.cursor
    if cur is None or cur.closed:
        cur = session.cursor = conn.raw.cursor()
    waiter = conn._create_waiter("execute")
    try:
        cur.execute(sql, params)
    except BaseException:
        conn._waiter = None
        raise
    timer = conn._loop.call_later(STATEMENT_TIMEOUT, _expire, waiter)
    try:
        conn._ready(conn._weakref)
        await waiter
    except (asyncio.CancelledError, TimeoutError):
        await asyncio.shield(conn.close())
        raise
    finally:
        timer.cancel()
        conn._waiter = None
    return cur


_NAMED_PARAM = re.compile(r"%\((\w+)\)s")


class Prepared:
    """A statement PostgreSQL parses and plans once per connection, then only executes.

    For statements on a hot path whose planning costs PostgreSQL as much as
    running them (a CTE writing several tables costs ~0.5 ms to plan). Written
    with ``%(name)s`` parameters like any other; they become ``$1..$n`` of a
    server-side PREPARE, named after the statement's text so two statements
    never share a name. Each connection remembers what it has prepared, so
    EXECUTE never meets an unknown name, inside a transaction or out
    (PREPARE is not undone by a rollback). A DEALLOCATE or DISCARD behind its
    back costs one failed EXECUTE: outside a transaction it is prepared again
    and retried, inside one the transaction fails and the next use prepares.

    Pooled sessions run with ``plan_cache_mode = force_generic_plan``: the plan
    is built once and never again per execution. Write the conditions so that
    the intended index is the only one that fits, whatever the statistics
    (``tests/plans.py`` and the plan tests using it check that).
    """

    def __init__(self, sql: str) -> None:
        order: list[str] = []

        def number(match: re.Match[str]) -> str:
            key = match.group(1)
            if key not in order:
                order.append(key)
            return f"${order.index(key) + 1}"

        body = _NAMED_PARAM.sub(number, sql)
        self.name = "p_" + sha256_hex(body)[:24]
        self.order = order
        self._prepare = f"PREPARE {self.name} AS {body}"
        self._execute = f"EXECUTE {self.name}(" + ", ".join(["%s"] * len(order)) + ")"
        self._columns: list[str] | None = None

    async def _run(self, conn: Conn, params: Mapping[str, Any]) -> Any:
        done = _session(conn).prepared
        if self.name not in done:
            await _run(conn, self._prepare, None)
            done.add(self.name)
        args = [params[key] for key in self.order]
        try:
            return await _run(conn, self._execute, args)
        except psycopg2.errors.InvalidSqlStatementName:
            # Someone ran DEALLOCATE or DISCARD on this connection after all.
            done.discard(self.name)
            if conn.raw.info.transaction_status != psycopg2.extensions.TRANSACTION_STATUS_IDLE:
                raise  # the transaction is lost; the next use prepares again
            await _run(conn, self._prepare, None)
            done.add(self.name)
            return await _run(conn, self._execute, args)

    def _names(self, cur: Any) -> list[str]:
        # A prepared statement's columns never change (PostgreSQL refuses to run
        # it if they would): read them from the cursor once, not per row fetched.
        names = self._columns
        if names is None or len(names) != len(cur.description or ()):
            names = self._columns = _columns(cur)
        return names

    async def fetch_one(self, conn: Conn, params: Mapping[str, Any]) -> dict[str, Any] | None:
        cur = await self._run(conn, params)
        row = cur.fetchone()
        return dict(zip(self._names(cur), row, strict=True)) if row is not None else None

    async def fetch_all(self, conn: Conn, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        cur = await self._run(conn, params)
        names = self._names(cur)
        rows = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
        _done_with(conn, cur)
        return rows

    async def execute(self, conn: Conn, params: Mapping[str, Any]) -> int:
        cur = await self._run(conn, params)
        return int(cur.rowcount)


def _columns(cur: Any) -> list[str]:
    return [d[0] for d in cur.description or ()]


def _done_with(conn: Conn, cur: Any) -> None:
    if cur.rowcount > _KEEP_CURSOR_ROWS:
        cur.close()  # the next statement opens a fresh one


async def fetch_one(conn: Conn, sql: str, params: Params = None) -> dict[str, Any] | None:
    cur = await _run(conn, sql, params)
    row = cur.fetchone()
    return dict(zip(_columns(cur), row, strict=True)) if row is not None else None


async def fetch_all(conn: Conn, sql: str, params: Params = None) -> list[dict[str, Any]]:
    cur = await _run(conn, sql, params)
    names = _columns(cur)
    rows = [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    _done_with(conn, cur)
    return rows


async def fetch_rows(conn: Conn, sql: str, params: Params = None) -> list[tuple[Any, ...]]:
    """The rows as psycopg2 gives them (tuples, in the SELECT's column order):
    for a reader of thousands of rows, where a dict per row is most of the cost."""
    cur = await _run(conn, sql, params)
    rows: list[tuple[Any, ...]] = cur.fetchall()
    _done_with(conn, cur)
    return rows


async def fetch_val(conn: Conn, sql: str, params: Params = None) -> Any:
    cur = await _run(conn, sql, params)
    row = cur.fetchone()
    return row[0] if row is not None else None


async def execute(conn: Conn, sql: str, params: Params = None) -> int:
    """Run a statement; return the number of rows it touched."""
    cur = await _run(conn, sql, params)
    return int(cur.rowcount)


# --- constraint violations, translated for each service to render ---------


class DataError(Exception):
    """Base of the translated database errors; services render these."""

    def __init__(self, message: str, *, constraint: str | None = None, column: str | None = None):
        super().__init__(message)
        self.message = message
        self.constraint = constraint
        self.column = column


class ConflictError(DataError):
    """A unique violation: a record with these values exists."""


class ConstraintError(DataError):
    """Any other integrity violation (not null, check, foreign key, bad value)."""


def translate_db_error(exc: BaseException) -> DataError | None:
    """Map a psycopg2 integrity or data error to a ConflictError/ConstraintError."""
    if not isinstance(exc, psycopg2.Error):
        return None
    diag = getattr(exc, "diag", None)
    constraint = getattr(diag, "constraint_name", None)
    column = getattr(diag, "column_name", None)
    if isinstance(exc, psycopg2.errors.UniqueViolation):
        what = f" ({constraint})" if constraint else ""
        return ConflictError(
            f"a record with these values already exists{what}", constraint=constraint
        )
    if isinstance(exc, psycopg2.errors.NotNullViolation):
        return ConstraintError(f"{column or 'a field'} is required", column=column)
    if isinstance(exc, psycopg2.errors.ForeignKeyViolation):
        return ConstraintError("a referenced record does not exist", constraint=constraint)
    if isinstance(exc, psycopg2.errors.CheckViolation):
        return ConstraintError(f"a value is out of range ({constraint})", constraint=constraint)
    if isinstance(exc, psycopg2.IntegrityError | psycopg2.DataError):
        primary = getattr(diag, "message_primary", None) or "invalid value"
        return ConstraintError(primary, constraint=constraint, column=column)
    return None
