"""The private names of aiopg that common/db.py relies on, checked in one place.

common/db.py goes below aiopg's public API on its hot path (docs/architecture.md
says why). Those names are not a contract: an upgrade may rename or drop any of
them. This test pins the version the code was written against and checks every
name, so an upgrade fails here, loudly and by name, not somewhere deep in a
pooled checkout. Upgrading means re-reading the new release's pool and
connection code, then updating the names and the version below together.
"""

from __future__ import annotations

from importlib.metadata import version

import aiopg
import pytest

from common.db import Database

AIOPG_VERSION = "1.4.0"

# Attributes of aiopg.Pool that LeanPool reads, writes or overrides.
POOL_INTERNALS = ("_acquire", "_closing", "_free", "_used", "_cond", "_loop", "_timeout")
POOL_PUBLIC = ("from_pool_fill", "release", "close", "wait_closed", "terminate", "size", "maxsize")
# Attributes of aiopg.Connection that _run uses to wait on the readiness callback.
CONNECTION_INTERNALS = ("_create_waiter", "_waiter", "_loop", "_ready", "_weakref")


def test_the_pinned_aiopg_is_the_one_installed():
    assert version("aiopg") == AIOPG_VERSION, (
        "aiopg changed: re-check common/db.py's LeanPool and _run against its pool "
        "and connection code, then update this test"
    )


@pytest.mark.parametrize("name", POOL_INTERNALS + POOL_PUBLIC)
async def test_pool_still_has(db: Database, name: str):
    pool = db.pool
    assert isinstance(pool, aiopg.Pool)
    assert hasattr(pool, name), f"aiopg.Pool has no {name} any more"


async def test_pool_condition_still_keeps_its_waiters(db: Database):
    # LeanPool checks whether aiopg's own path has a task waiting.
    assert hasattr(db.pool._cond, "_waiters")  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", CONNECTION_INTERNALS)
async def test_connection_still_has(db: Database, name: str):
    async with db.connection() as conn:
        assert hasattr(conn, name), f"aiopg.Connection has no {name} any more"
