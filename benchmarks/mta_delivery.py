"""CPU per message of local delivery, without SMTP: ``mta.delivery.deliver`` in a loop.

    .venv/bin/python benchmarks/mta_delivery.py [--messages 2000] [--concurrency 10]
        [--size 10240] [--profile]

What the SMTP daemon does after the final dot, for one recipient each:
authentication checks (SPF, DKIM, DMARC against a loopback DNS server that
answers NXDOMAIN), trace fields, the parse, the raw message and the rows
committed through the group commit. Reports messages/s, this process's CPU
per message and PostgreSQL's, then the wall time of one RCPT lookup
(``mail.directory.lookup_recipient``) against the filled store. ``--profile`` prints
the top of a cProfile run. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.processes import postgres_pids, process_cpu_seconds  # noqa: E402
from benchmarks.smtp_inbound import SECRET, prepare  # noqa: E402


def message(n: int, size: int) -> bytes:
    head = (
        f"From: Sender <sender@source.bench.test>\r\nTo: alice@bench.test\r\n"
        f"Subject: benchmark message {n}\r\nMessage-ID: <{n}.bench@source.bench.test>\r\n"
        "Date: Sun, 22 Nov 2026 04:00:00 +0000\r\nMIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=us-ascii\r\n\r\n"
    ).encode()
    line = b"La de da de da de da de da de da de da de da de da de da de da de da de da.\r\n"
    return head + line * max(1, (size - len(head)) // len(line))


async def run(args: argparse.Namespace) -> None:
    from common.clock import Clock
    from common.db import Database
    from common.embedded_pg import EmbeddedPostgres
    from common.jobs import JobQueue
    from common.runtime import Runtime
    from common.settings import load_settings
    from mail.directory import lookup_recipient
    from mta.context import MtaContext
    from mta.delivery import Inbound, deliver
    from tests.mta.dnsserver import LoopbackDNS

    tmp = Path(tempfile.mkdtemp(prefix="mta-delivery-"))
    pg = EmbeddedPostgres(tmp / "pgdata", delete_on_stop=True)
    pg.start()
    dns = LoopbackDNS().start()
    try:
        dsn = pg.ensure_database("bench")
        await prepare(dsn)
        settings = load_settings(
            {
                "DATABASE_URL": dsn,
                "DATA_DIR": str(tmp / "data"),
                "SECRET": SECRET,
                "APP_ENV": "production",
                "DNS_RESOLVERS": dns.address,
            }
        )
        db = await Database.connect(dsn, size=args.concurrency)
        clock = Clock()
        runtime = Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock))
        ctx = MtaContext.build(runtime)
        async with db.connection() as conn:
            found = await lookup_recipient(conn, "alice", "bench.test")
        assert found.mailbox is not None
        mailbox = found.mailbox
        queue = list(range(args.messages))

        async def sender() -> None:
            while queue:
                n = queue.pop()
                await deliver(
                    ctx,
                    Inbound(
                        raw=message(n, args.size),
                        mail_from="sender@source.bench.test",
                        recipients=[("alice@bench.test", mailbox)],
                        ip="127.0.0.1",
                        helo="client.bench.test",
                    ),
                )

        warm = args.messages // 10
        queue, rest = queue[:warm], queue[warm:]
        await asyncio.gather(*(sender() for _ in range(args.concurrency)))
        # As the daemon's RCPT lookup does for every message: now with its inbox.
        async with db.connection() as conn:
            found = await lookup_recipient(conn, "alice", "bench.test")
        assert found.mailbox is not None and found.mailbox.inbox_id is not None
        mailbox = found.mailbox
        queue = rest
        pids = postgres_pids(pg.pgdata)
        db_before = {pid: process_cpu_seconds(pid) for pid in pids()}
        profile = cProfile.Profile() if args.profile else None
        cpu, wall = time.process_time(), time.perf_counter()
        if profile:
            profile.enable()
        await asyncio.gather(*(sender() for _ in range(args.concurrency)))
        if profile:
            profile.disable()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        db_after = {pid: process_cpu_seconds(pid) for pid in pids()}
        db_cpu = sum(db_after[p] - db_before[p] for p in db_after if p in db_before)
        n = args.messages - warm
        print(
            f"{n} messages: {n / wall:.0f}/s, delivery CPU {cpu / n * 1000:.2f} ms/message,"
            f" PostgreSQL CPU {db_cpu / n * 1000:.2f} ms/message"
        )
        if profile:
            out = io.StringIO()
            stats = pstats.Stats(profile, stream=out).sort_stats("cumulative")
            stats.print_stats(45)
            print(out.getvalue())
        async with db.connection() as conn:
            t = time.perf_counter()
            for _ in range(200):
                await lookup_recipient(conn, "alice", "bench.test")
            print("lookup after the run, ms:", (time.perf_counter() - t) / 200 * 1000)
        await db.close()
    finally:
        dns.stop()
        pg.stop()


def main() -> None:
    import uvloop

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--size", type=int, default=10240)
    parser.add_argument("--profile", action="store_true")
    uvloop.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
