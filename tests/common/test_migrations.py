from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from common.db import Database
from common.migrations import MigrationError, MigrationSet, migrate
from gateway.main import all_migrations


def write(directory: Path, name: str, text: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(text)


@pytest.fixture
async def empty_db(empty_database_url):
    db = await Database.connect(empty_database_url, size=3)
    yield db
    await db.close()


async def test_files_apply_in_order_into_their_schema_once(empty_db, tmp_path):
    mdir = tmp_path / "m"
    write(mdir, "0002_add.sql", "ALTER TABLE things ADD COLUMN colour text;")
    write(mdir, "0001_create.sql", "CREATE TABLE things (id serial PRIMARY KEY, name text);")
    mset = MigrationSet("demo", mdir)
    assert await migrate(empty_db, [mset]) == ["demo/0001_create.sql", "demo/0002_add.sql"]
    assert await migrate(empty_db, [mset]) == []
    await empty_db.execute("INSERT INTO demo.things (name, colour) VALUES ('a', 'red')")
    recorded = await empty_db.fetch_all("SELECT name FROM demo.schema_migrations ORDER BY name")
    assert [r["name"] for r in recorded] == ["0001_create.sql", "0002_add.sql"]


async def test_failing_file_names_itself_and_leaves_nothing(empty_db, tmp_path):
    mdir = tmp_path / "m"
    write(mdir, "0001_ok.sql", "CREATE TABLE a (id int);")
    write(mdir, "0002_bad.sql", "CREATE TABLE b (id int);\nSELECT * FROM no_such_table;")
    with pytest.raises(MigrationError) as info:
        await migrate(empty_db, [MigrationSet("demo", mdir)])
    assert "demo/0002_bad.sql" in str(info.value)
    assert "no_such_table" in str(info.value)
    # The first file stays applied; nothing of the failing file does.
    assert await empty_db.fetch_val("SELECT to_regclass('demo.a') IS NOT NULL")
    assert await empty_db.fetch_val("SELECT to_regclass('demo.b') IS NULL")
    names = await empty_db.fetch_all("SELECT name FROM demo.schema_migrations")
    assert [r["name"] for r in names] == ["0001_ok.sql"]


async def test_two_processes_starting_together_apply_each_file_once(empty_database_url):
    a = await Database.connect(empty_database_url, size=2)
    b = await Database.connect(empty_database_url, size=2)
    try:
        sets = all_migrations()
        first, second = await asyncio.gather(migrate(a, sets), migrate(b, sets))
        assert sorted(first + second) == sorted(set(first + second))
        assert len(first + second) == sum(len(s.files()) for s in sets)
        count = await a.fetch_val("SELECT count(*) FROM common.schema_migrations")
        assert count == len(sets[0].files())
    finally:
        await a.close()
        await b.close()


def test_badly_named_file_is_refused(tmp_path):
    write(tmp_path, "1_create.sql", "")
    with pytest.raises(MigrationError, match="NNNN"):
        MigrationSet("demo", tmp_path).files()


def test_every_package_declares_its_migrations_beside_itself():
    from gateway.main import all_migrations

    sets = all_migrations()
    assert [s.schema for s in sets] == ["common", "oauth", "content", "mail", "mta"]
    for s in sets:
        assert s.directory.name == "migrations" and s.directory.parent.name == s.schema
        assert s.files(), f"{s.schema} has no migration files"
