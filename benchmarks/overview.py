"""GET /api/overview's work on an account with 100,000 messages.

    .venv/bin/python benchmarks/overview.py [--messages 100000] [--others 300000] [--runs 50]

Seeds, in SQL, an account whose event log holds --messages email.received
events spread over the last 30 days (one per delivered message), a fifth as
many email.sent, 1 % of those bounced and 0.1 % complained, ten addresses
with usage counters, and another account with --others events (so the index
has to pick the account out). Then calls the Overview's service (every query
the route runs) --runs times in this process and prints the median and p95,
and again after the daily rollup (the state the hourly job keeps). With no --database-url an embedded
PostgreSQL is started in a temporary directory. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.smtp_inbound import SECRET, prepare  # noqa: E402

SEED = """
INSERT INTO mta.events (account_id, type, payload, created_at, dispatched_at)
SELECT %(a)s, %(t)s, jsonb_build_object('type', %(t)s, 'data', jsonb_build_object('n', g)),
       %(now)s - (g * (interval '30 days' / %(n)s)), %(now)s
  FROM generate_series(1, %(n)s) AS g
"""


async def measure(ctx: object, account: str, runs: int, what: str) -> None:
    from mail.overview import service

    timings = []
    for _ in range(runs):
        t = time.perf_counter()
        await service.overview(ctx, account)  # type: ignore[arg-type]
        timings.append((time.perf_counter() - t) * 1000)
    timings.sort()
    p95 = timings[max(0, int(len(timings) * 0.95) - 1)]
    print(f"overview, {what}: median {statistics.median(timings):.1f} ms, p95 {p95:.1f} ms")


async def run(args: argparse.Namespace) -> None:
    from datetime import UTC, datetime

    from common.clock import Clock
    from common.db import Database
    from common.embedded_pg import EmbeddedPostgres
    from common.jobs import JobQueue
    from common.runtime import Runtime
    from common.settings import load_settings
    from mail.overview import service
    from mail.service import MailService

    tmp = Path(tempfile.mkdtemp(prefix="overview-"))
    pg = None
    dsn = args.database_url
    if not dsn:
        pg = EmbeddedPostgres(tmp / "pgdata", delete_on_stop=True)
        pg.start()
        dsn = pg.ensure_database("bench")
    try:
        address_id = await prepare(dsn)
        db = await Database.connect(dsn, size=2)
        now = datetime.now(UTC)
        account = str(
            await db.fetch_val("SELECT account_id FROM mail.domains WHERE name = 'bench.test'")
        )
        domain = str(await db.fetch_val("SELECT id FROM mail.domains WHERE name = 'bench.test'"))
        other = str(
            await db.fetch_val(
                "INSERT INTO mail.accounts (email, password_hash, referral_code, created_at,"
                " updated_at) VALUES ('other@panel.test', 'x', 'other', %s, %s) RETURNING id",
                (now, now),
            )
        )
        for i in range(9):
            await db.execute(
                "INSERT INTO mail.addresses (domain_id, local_part, password_hash, quota_bytes,"
                " created_at, updated_at) VALUES (%s, %s, 'x', 1000000000, %s, %s)",
                (domain, f"user{i}", now, now),
            )
        await db.execute(
            "INSERT INTO mta.quota_usage (address_id, used_bytes, emails) VALUES (%s, %s, %s)",
            (address_id, args.messages * 20_000, args.messages),
        )
        n = args.messages
        started = time.perf_counter()
        for account_id, type_, count in (
            (account, "email.received", n),
            (account, "email.sent", n // 5),
            (account, "email.delivered", n // 5),
            (account, "email.bounced", n // 500),
            (account, "email.complained", n // 5000),
            (other, "email.received", args.others),
        ):
            await db.execute(SEED, {"a": account_id, "t": type_, "n": max(1, count), "now": now})
        await db.execute("VACUUM ANALYZE mta.events")
        print(f"seeded in {time.perf_counter() - started:.1f} s")
        settings = load_settings(
            {
                "DATABASE_URL": dsn,
                "DATA_DIR": str(tmp / "data"),
                "SECRET": SECRET,
                "APP_ENV": "production",
            }
        )
        clock = Clock()
        runtime = Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock))
        ctx = MailService(runtime).context
        result = await service.overview(ctx, account)
        assert result.last_30d["email.received"] >= n * 0.99, result.last_30d
        await measure(ctx, account, args.runs, f"{n} messages in 30 days, nothing rolled up")
        from mta import mailstore

        t = time.perf_counter()
        async with db.transaction() as conn:
            await mailstore.roll_up_event_counts(conn, now)
        print(f"first rollup of {n + args.others} events: {time.perf_counter() - t:.1f} s")
        await db.execute("VACUUM ANALYZE mta.event_days")
        rolled = await service.overview(ctx, account)
        assert rolled.last_30d == result.last_30d, (rolled.last_30d, result.last_30d)
        await measure(ctx, account, args.runs, f"{n} messages in 30 days, closed days rolled up")
        await db.close()
    finally:
        if pg is not None:
            pg.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--others", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--database-url", default="")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
