"""Numbered SQL migrations, applied per schema under an advisory lock.

Each package keeps ``<package>/migrations/NNNN_name.sql``. Files are applied in
order into the package's own schema (``search_path`` is set to it), each in
one transaction together with its record in ``<schema>.schema_migrations``, so
a failing file leaves nothing of itself behind. A session-level advisory lock
serialises processes that start together: the second one waits, then finds
every file recorded and applies nothing.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psycopg2
from psycopg2 import sql

from common.db import Database, execute, fetch_all, transaction

log = logging.getLogger(__name__)

# pg_advisory_lock key shared by every process of this project: "svcmigr".
MIGRATION_LOCK_KEY = 0x7376636D696772
_FILE_RE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


class MigrationError(Exception):
    """A migration file failed; start-up stops with this one-line message."""


@dataclass(frozen=True)
class MigrationSet:
    schema: str
    directory: Path

    @classmethod
    def beside(cls, module_file: str) -> MigrationSet:
        """The one way a package declares its migrations: ``MIGRATIONS = MigrationSet.beside(__file__)``
        in its ``__init__.py``, for the ``migrations/`` folder of the package, in
        the schema named after the package."""
        package = Path(module_file).resolve().parent
        return cls(package.name, package / "migrations")

    def files(self) -> list[Path]:
        if not self.directory.is_dir():
            return []
        found = []
        for path in sorted(self.directory.iterdir()):
            if path.suffix != ".sql":
                continue
            if not _FILE_RE.match(path.name):
                raise MigrationError(f"{path}: migration names are NNNN_lowercase_name.sql")
            found.append(path)
        numbers = [p.name[:4] for p in found]
        if len(numbers) != len(set(numbers)):
            raise MigrationError(f"{self.directory}: two migrations share a number")
        return found


async def migrate(db: Database, sets: Sequence[MigrationSet]) -> list[str]:
    """Apply every pending file of every set; return ``schema/file`` names applied."""
    applied: list[str] = []
    async with db.connection() as conn:
        await execute(conn, "SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
        try:
            for mset in sets:
                applied += await _migrate_set(conn, mset)
        finally:
            await execute(conn, "SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
    return applied


async def pending(db: Database, sets: Sequence[MigrationSet]) -> list[str]:
    """``schema/file`` of every shipped migration this database has not applied (readiness).

    One statement over every schema's ``schema_migrations``; a schema whose
    table is missing makes it fail, which a caller reports as not ready.
    """
    shipped = [(mset.schema, path.name) for mset in sets for path in mset.files()]
    if not shipped:
        return []
    query = sql.SQL(" UNION ALL ").join(
        sql.SQL("SELECT {} AS schema, name FROM {}.schema_migrations").format(
            sql.Literal(mset.schema), sql.Identifier(mset.schema)
        )
        for mset in sets
    )
    async with db.connection() as conn:
        rows = await fetch_all(conn, query.as_string(conn.raw))
    applied = {(row["schema"], row["name"]) for row in rows}
    return [f"{schema}/{name}" for schema, name in shipped if (schema, name) not in applied]


async def _migrate_set(conn, mset: MigrationSet) -> list[str]:  # type: ignore[no-untyped-def]
    schema = sql.Identifier(mset.schema)
    await execute(
        conn, sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema).as_string(conn.raw)
    )
    await execute(
        conn,
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {}.schema_migrations ("
            " name text PRIMARY KEY,"
            " checksum text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        .format(schema)
        .as_string(conn.raw),
    )
    done = {
        row["name"]: row["checksum"]
        for row in await fetch_all(
            conn,
            sql.SQL("SELECT name, checksum FROM {}.schema_migrations")
            .format(schema)
            .as_string(conn.raw),
        )
    }
    applied = []
    for path in mset.files():
        text = path.read_text()
        checksum = hashlib.sha256(text.encode()).hexdigest()
        if path.name in done:
            if done[path.name] != checksum:
                # An edited applied file is a mistake worth knowing, not worth stopping for.
                log.warning("migration %s/%s changed after it was applied", mset.schema, path.name)
            continue
        try:
            async with transaction(conn):
                await execute(
                    conn,
                    sql.SQL("SET LOCAL search_path TO {}, public")
                    .format(schema)
                    .as_string(conn.raw),
                )
                await execute(conn, text)
                await execute(
                    conn,
                    sql.SQL("INSERT INTO {}.schema_migrations (name, checksum) VALUES (%s, %s)")
                    .format(schema)
                    .as_string(conn.raw),
                    (path.name, checksum),
                )
        except psycopg2.Error as exc:
            message = (exc.pgerror or str(exc)).strip().splitlines()[0]
            raise MigrationError(f"migration {mset.schema}/{path.name} failed: {message}") from exc
        log.info("applied migration %s/%s", mset.schema, path.name)
        applied.append(f"{mset.schema}/{path.name}")
    return applied
