"""The database layer: an aiopg pool, transactions and small query helpers.

SQL lives next to the code that owns each table; those functions take the
connection as their first argument so one transaction can span several of
them. aiopg connections are always in autocommit mode, so a transaction is an
explicit BEGIN/COMMIT on one pooled connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiopg
import psycopg2
import psycopg2.errors
import psycopg2.extensions
import psycopg2.extras

log = logging.getLogger(__name__)

Conn = aiopg.Connection
Params = Sequence[Any] | Mapping[str, Any] | None

# Hand Python dicts and lists to jsonb columns through psycopg2.extras.Json.
Json = psycopg2.extras.Json


class Database:
    """An aiopg pool with transaction and one-shot query helpers."""

    def __init__(self, pool: aiopg.Pool, dsn: str) -> None:
        self.pool = pool
        self.dsn = dsn

    @classmethod
    async def connect(cls, dsn: str, *, size: int = 5) -> Database:
        pool = await aiopg.create_pool(
            dsn,
            minsize=1,
            maxsize=size,
            timeout=30,
            # Every session works in UTC; times are timestamptz throughout.
            options="-c timezone=UTC",
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

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[Conn]:
        """A pooled connection in autocommit mode: each statement commits."""
        async with self.pool.acquire() as conn:
            yield conn

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
    async with conn.cursor() as cur:
        await cur.execute("BEGIN")
    try:
        yield conn
    except BaseException:
        if not conn.closed:
            async with conn.cursor() as cur:
                await cur.execute("ROLLBACK")
        raise
    else:
        async with conn.cursor() as cur:
            await cur.execute("COMMIT")


async def fetch_one(conn: Conn, sql: str, params: Params = None) -> dict[str, Any] | None:
    async with conn.cursor(cursor_factory=psycopg2.extras.RealDictCursor) as cur:
        await cur.execute(sql, params)
        row = await cur.fetchone()
        return dict(row) if row is not None else None


async def fetch_all(conn: Conn, sql: str, params: Params = None) -> list[dict[str, Any]]:
    async with conn.cursor(cursor_factory=psycopg2.extras.RealDictCursor) as cur:
        await cur.execute(sql, params)
        return [dict(r) for r in await cur.fetchall()]


async def fetch_val(conn: Conn, sql: str, params: Params = None) -> Any:
    async with conn.cursor() as cur:
        await cur.execute(sql, params)
        row = await cur.fetchone()
        return row[0] if row is not None else None


async def execute(conn: Conn, sql: str, params: Params = None) -> int:
    """Run a statement; return the number of rows it touched."""
    async with conn.cursor() as cur:
        await cur.execute(sql, params)
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
