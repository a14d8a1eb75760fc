from __future__ import annotations

import pytest

from common.db import ConflictError, ConstraintError, transaction, translate_db_error


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
