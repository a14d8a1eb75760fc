"""Client-side CPU per statement: aiopg's own pool and cursor against common.db.

    .venv/bin/python benchmarks/db_overhead.py [--statements 5000] [--database-url ...]
        [--write-docs]

One short statement (``SELECT $1::text, $2::int``) at a time, in one uvloop
process, so what differs is the Python work around the round trip: checking a
connection out of the pool, running the statement, reading the row, checking
the connection back in. Reports CPU microseconds of this process per
statement (the steadier figure) and wall time. --write-docs rewrites the
"Database statements" section of docs/performance.md. Not part of the test
suite.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.performance_doc import replace_section  # noqa: E402

SQL = "SELECT %s::text AS a, %s::int AS b"


async def measure(name: str, step: Callable[[], Awaitable[object]], n: int) -> str:
    for _ in range(200):  # warm the pool and the caches
        await step()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(n):
        await step()
    cpu_us = (time.process_time() - cpu) / n * 1e6
    wall_us = (time.perf_counter() - wall) / n * 1e6
    return f"| {name} | {cpu_us:.0f} | {wall_us:.0f} |"


async def bench(dsn: str, n: int) -> list[str]:
    import aiopg

    from common.db import Database, fetch_one

    stock = await aiopg.create_pool(dsn, minsize=1, maxsize=4)
    db = await Database.connect(dsn, size=4)

    async def aiopg_step() -> object:
        async with stock.acquire() as conn, conn.cursor() as cur:
            await cur.execute(SQL, ("x", 1))
            return await cur.fetchone()

    async def common_step() -> object:
        async with db.connection() as conn:
            return await fetch_one(conn, SQL, ("x", 1))

    async def aiopg_checkout() -> None:
        async with stock.acquire():
            pass

    async def common_checkout() -> None:
        async with db.connection():
            pass

    try:
        return [
            await measure("aiopg pool + aiopg cursor (stock)", aiopg_step, n),
            await measure("common.db: LeanPool + fetch_one", common_step, n),
            await measure("checkout only, aiopg pool", aiopg_checkout, n),
            await measure("checkout only, LeanPool", common_checkout, n),
        ]
    finally:
        stock.close()
        await stock.wait_closed()
        await db.close()


async def run(args: argparse.Namespace) -> None:
    pg = None
    dsn = args.database_url
    if not dsn:
        from common.embedded_pg import EmbeddedPostgres

        tmp = tempfile.mkdtemp(prefix="db-overhead-")
        pg = EmbeddedPostgres(Path(tmp) / "pgdata", delete_on_stop=True)
        pg.start()
        dsn = pg.dsn()
    try:
        rows = await bench(dsn, args.statements)
    finally:
        if pg is not None:
            pg.stop()
    table = "\n".join(["| path | CPU µs/statement | wall µs/statement |", "|---|---|---|", *rows])
    print(table)
    if args.write_docs:
        replace_section(
            "Database statements",
            "What `benchmarks/db_overhead.py` measures: the Python work around one short\n"
            "statement's round trip (check a connection out, run, read the row, check it\n"
            "back in), one statement at a time in one uvloop process, with aiopg's own\n"
            "pool and cursor next to `common/db.py`'s path (a pool fast path, direct\n"
            "hand-over when full, one reusable cursor per connection, no `wait_for` per\n"
            f"statement). {args.statements} statements each, on {os.cpu_count()} CPUs"
            f" ({platform.machine()}, Python {platform.python_version()}),"
            f" {time.strftime('%Y-%m-%d')}.\n\n{table}\n\n"
            "Every service's statements go through this path; on the OAuth refresh grant\n"
            "it was a quarter of the server's CPU per request.",
        )


def main() -> None:
    import uvloop

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=5000)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--write-docs", action="store_true")
    uvloop.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
