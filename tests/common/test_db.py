from __future__ import annotations

import asyncio

import psycopg2.errors
import pytest

import common.db
from common.db import (
    ConflictError,
    ConstraintError,
    Database,
    Prepared,
    execute,
    fetch_all,
    fetch_rows,
    fetch_val,
    transaction,
    translate_db_error,
)


@pytest.fixture
async def table(db):
    await db.execute(
        "CREATE TABLE public.people (id serial PRIMARY KEY, email text UNIQUE NOT NULL,"
        " age int CHECK (age >= 0))"
    )
    return db


async def capture(db, sql, params=None):
    try:
        await db.execute(sql, params)
    except Exception as exc:
        return translate_db_error(exc)
    raise AssertionError("statement should have failed")


async def test_unique_violation_becomes_conflict(table):
    await table.execute("INSERT INTO public.people (email) VALUES ('a@example.com')")
    error = await capture(table, "INSERT INTO public.people (email) VALUES ('a@example.com')")
    assert isinstance(error, ConflictError)
    assert error.constraint == "people_email_key"


async def test_other_violations_become_constraint_errors(table):
    assert isinstance(
        await capture(table, "INSERT INTO public.people (email) VALUES (NULL)"), ConstraintError
    )
    assert isinstance(
        await capture(table, "INSERT INTO public.people (email, age) VALUES ('b@x', -1)"),
        ConstraintError,
    )
    assert isinstance(
        await capture(table, "INSERT INTO public.people (email, age) VALUES ('b@x', 'old')"),
        ConstraintError,
    )


async def test_transaction_rolls_back_on_error(table):
    with pytest.raises(RuntimeError):
        async with table.transaction() as conn:
            async with conn.cursor() as cur:
                await cur.execute("INSERT INTO public.people (email) VALUES ('c@example.com')")
            raise RuntimeError("boom")
    assert await table.fetch_val("SELECT count(*) FROM public.people") == 0


async def test_nested_helper_commits(table):
    async with table.connection() as conn, transaction(conn), conn.cursor() as cur:
        await cur.execute("INSERT INTO public.people (email) VALUES ('d@example.com')")
    assert await table.fetch_val("SELECT count(*) FROM public.people") == 1


async def test_a_cancelled_statement_closes_its_connection_and_the_pool_replaces_it(db):
    async with db.connection() as conn:
        pid = await fetch_val(conn, "SELECT pg_backend_pid()")
        task = asyncio.ensure_future(execute(conn, "SELECT pg_sleep(30)"))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # Still running on the server: the connection cannot be trusted again.
        assert conn.closed
    assert await db.fetch_val("SELECT pg_backend_pid()") != pid
    assert await db.fetch_val("SELECT 1") == 1


async def test_a_statement_past_its_timeout_fails_and_closes_its_connection(db, monkeypatch):
    monkeypatch.setattr(common.db, "STATEMENT_TIMEOUT", 0.2)
    async with db.connection() as conn:
        with pytest.raises(TimeoutError):
            await execute(conn, "SELECT pg_sleep(30)")
        assert conn.closed
    assert await db.fetch_val("SELECT 1") == 1


async def test_a_failed_statement_leaves_the_connection_usable(db):
    async with db.connection() as conn:
        with pytest.raises(psycopg2.errors.DivisionByZero):
            await fetch_val(conn, "SELECT 1 / 0")
        assert await fetch_all(conn, "SELECT g AS n FROM generate_series(1, 3) g") == [
            {"n": 1},
            {"n": 2},
            {"n": 3},
        ]


async def test_queued_tasks_get_connections_in_turn_when_the_pool_is_exhausted(database_url):
    db = await Database.connect(database_url, size=2)
    try:
        served: list[int] = []

        async def hold(n: int) -> None:
            async with db.connection() as conn:
                await execute(conn, "SELECT pg_sleep(0.05)")
                served.append(n)

        await asyncio.gather(*(hold(n) for n in range(12)))
        assert sorted(served) == list(range(12))
        # Every connection came back: two free, none in use.
        assert (db.pool.freesize, len(db.pool._used)) == (2, 0)
    finally:
        await db.close()


async def test_the_connection_used_last_is_the_one_handed_out_next(database_url):
    db = await Database.connect(database_url, size=3)
    try:
        # Three connections open at once, released in turn: the pool has three free.
        async with db.connection() as a, db.connection() as b, db.connection() as c:
            pids = [await fetch_val(conn, "SELECT pg_backend_pid()") for conn in (a, b, c)]
        assert db.pool.freesize == 3
        # One after another, every checkout gets the same (warm) backend back,
        # the last one released, instead of going round all three.
        for _ in range(4):
            async with db.connection() as conn:
                assert await fetch_val(conn, "SELECT pg_backend_pid()") == pids[0]
    finally:
        await db.close()


async def test_fetch_rows_gives_tuples_in_column_order(db):
    async with db.connection() as conn:
        rows = await fetch_rows(conn, "SELECT n, n * 2 AS twice FROM generate_series(1, 3) n")
    assert rows == [(1, 2), (2, 4), (3, 6)]


async def test_a_connection_released_inside_a_transaction_is_not_reused(db):
    with pytest.warns(ResourceWarning):
        async with db.connection() as conn:
            await execute(conn, "BEGIN")
            await execute(conn, "CREATE TEMP TABLE left_open (x int)")
    # The pool closed it instead of handing out a connection mid-transaction.
    assert conn.closed
    assert await db.fetch_val("SELECT to_regclass('left_open') IS NULL") is True


async def test_a_full_pool_hands_connections_over_in_arrival_order(database_url):
    db = await Database.connect(database_url, size=1)
    try:
        order: list[int] = []
        async with db.connection() as first:
            pid = await fetch_val(first, "SELECT pg_backend_pid()")

            async def queued(n: int) -> None:
                async with db.connection() as conn:
                    order.append(n)
                    assert await fetch_val(conn, "SELECT pg_backend_pid()") == pid

            tasks = [asyncio.ensure_future(queued(n)) for n in range(5)]
            await asyncio.sleep(0.05)
            assert order == []  # all five queued behind the one connection
        await asyncio.gather(*tasks)
        assert order == [0, 1, 2, 3, 4]
    finally:
        await db.close()


async def test_a_task_queued_on_a_full_pool_times_out_and_leaves_the_queue(
    database_url, monkeypatch
):
    db = await Database.connect(database_url, size=1)
    db.pool._timeout = 0.1
    try:
        async with db.connection():
            with pytest.raises(TimeoutError):
                async with db.connection():
                    pass
        assert not db.pool._queue
        assert await db.fetch_val("SELECT 1") == 1
    finally:
        await db.close()


async def test_a_connection_lost_while_others_queue_is_replaced_for_them(database_url):
    db = await Database.connect(database_url, size=1)
    try:
        async with db.connection() as conn:
            waiting = asyncio.ensure_future(db.fetch_val("SELECT pg_backend_pid()"))
            await asyncio.sleep(0.05)
            old = await fetch_val(conn, "SELECT pg_backend_pid()")
            await conn.close()  # comes back closed: the queued task opens a new one
        assert await waiting not in (None, old)
    finally:
        await db.close()


async def test_a_prepared_statement_is_planned_once_per_connection_and_heals_after_discard(db):
    statement = Prepared("SELECT %(n)s::int + %(m)s::int AS sum, %(n)s::int AS n")
    async with db.connection() as conn:
        async with transaction(conn):
            assert await statement.fetch_one(conn, {"n": 1, "m": 2}) == {"sum": 3, "n": 1}
        assert (
            await fetch_val(
                conn,
                "SELECT count(*) FROM pg_prepared_statements WHERE name = %s",
                (statement.name,),
            )
            == 1
        )
        # Prepared inside a transaction that then rolled back: still there.
        with pytest.raises(RuntimeError):
            async with transaction(conn):
                await statement.fetch_all(conn, {"n": 2, "m": 2})
                raise RuntimeError("roll back")
        assert await statement.fetch_one(conn, {"n": 5, "m": 5}) == {"sum": 10, "n": 5}
        await execute(conn, "DEALLOCATE ALL")
        assert await statement.fetch_one(conn, {"n": 2, "m": 3}) == {"sum": 5, "n": 2}
        await execute(conn, "DEALLOCATE ALL")
        with pytest.raises(psycopg2.errors.InvalidSqlStatementName):
            async with transaction(conn):
                await statement.execute(conn, {"n": 1, "m": 1})
        async with transaction(conn):
            assert await statement.fetch_one(conn, {"n": 4, "m": 4}) == {"sum": 8, "n": 4}
