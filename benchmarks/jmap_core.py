"""Mailbox/get (with thread counts), Thread/get and the push state read at 100,000 messages.

    .venv/bin/python benchmarks/jmap_core.py [--keep DIR] [--runs 200]

Fills one inbox exactly as benchmarks/jmap_query.py does (and shares its
``--keep`` directory, so one fill serves both), then times the statements
the JMAP core runs on it: Mailbox/get's rows with ``totalThreads`` and
``unreadThreads`` (``mta.jmap.mailbox._rows``), Thread/get of 50 threads,
``push.account_states`` (what every EventSource stream reads per change),
and Mailbox/changes' read of the log. p50/p99 in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.jmap_query import generate, load, pct  # noqa: E402
from benchmarks.smtp_inbound import prepare  # noqa: E402


async def run(args: argparse.Namespace) -> None:
    from common.db import Database, fetch_all
    from common.embedded_pg import EmbeddedPostgres
    from common.migrations import migrate
    from gateway.main import all_migrations
    from mta.jmap import mailbox, push, thread
    from mta.store import mailboxes

    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="jmap-core-"))
    tmp.mkdir(parents=True, exist_ok=True)
    pg = EmbeddedPostgres(tmp / "pgdata", delete_on_stop=not args.keep)
    pg.start()
    try:
        dsn = pg.ensure_database("bench")
        if (tmp / "terms.json").exists():
            address_id = json.loads((tmp / "terms.json").read_text())["address_id"]
            db = await Database.connect(dsn, size=2)
            await migrate(db, all_migrations())
        else:
            address_id = await prepare(dsn)
            db = await Database.connect(dsn, size=2)
            async with db.transaction() as conn:
                roles = await mailboxes.ensure_defaults(conn, address_id, datetime.now(UTC))
            rows, terms = generate(args.messages)
            await asyncio.to_thread(load, dsn, address_id, roles["inbox"], rows)
            terms.update(address_id=address_id, inbox=roles["inbox"])
            (tmp / "terms.json").write_text(json.dumps(terms))
        await db.execute("ANALYZE")
        async with db.connection() as conn:
            threads = [
                r["id"]
                for r in await fetch_all(
                    conn,
                    "SELECT thread_id::text AS id FROM mta.emails WHERE address_id = %s"
                    " ORDER BY received_at DESC LIMIT 50",
                    (address_id,),
                )
            ]

            async def mailbox_get() -> object:
                return await mailbox._rows(conn, address_id, threads=True)

            async def mailbox_get_plain() -> object:
                return await mailbox._rows(conn, address_id, threads=False)

            async def thread_get() -> object:
                return await thread.email_ids(conn, address_id, threads)

            async def mailbox_get_uncached() -> object:
                mailbox.THREAD_COUNTS.clear()  # the first read after a change
                return await mailbox._rows(conn, address_id, threads=True)

            async def states() -> object:
                return await push.account_states(conn, address_id)

            async def changes() -> object:
                return await fetch_all(
                    conn,
                    """
                    SELECT id, object_id::text, change FROM mta.changes
                     WHERE address_id = %s AND type_name = 'Mailbox' AND id > 0
                     ORDER BY id LIMIT 2001
                    """,
                    (address_id,),
                )

            cases = [
                ("Mailbox/get, thread counts computed", mailbox_get_uncached),
                ("Mailbox/get, thread counts cached", mailbox_get),
                ("Mailbox/get without thread counts", mailbox_get_plain),
                ("Thread/get, 50 threads", thread_get),
                ("push: account states (6 types)", states),
                ("Mailbox/changes from 0, 2,000 rows", changes),
            ]
            for name, fn in cases:
                await fn()
                times = []
                for _ in range(args.runs):
                    t = time.perf_counter()
                    await fn()
                    times.append((time.perf_counter() - t) * 1000)
                print(f"{name:48s} p50 {pct(times, 0.5):7.2f} ms   p99 {pct(times, 0.99):7.2f} ms")
        await db.close()
    finally:
        pg.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--keep", help="a directory to keep the filled database in, and reuse")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
