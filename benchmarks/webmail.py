"""The webmail list and reading a message, over HTTP, on one mailbox of 100,000 messages.

    .venv/bin/python benchmarks/webmail.py [--messages 100000] [--runs 100] [--keep DIR]

Fills the inbox with the JMAP benchmark's generated mail (benchmarks/
jmap_query.py: threads, 2,000 senders, Zipf words, attachments, seven in
ten read), gives the address a password, builds the real gateway app on an
embedded PostgreSQL, signs in over HTTP (POST /api/mail/login) and times,
as a browser would call them: the first page of the inbox, a deep page,
the unread filter, a text search, one message with its sanitised body, and
its reading frame. Reports p50/p99 wall times per request (client side,
same host). Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.jmap_query import generate, load  # noqa: E402
from benchmarks.smtp_inbound import prepare  # noqa: E402

PASSWORD = "benchmark password 1"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(args: argparse.Namespace) -> None:
    from aiohttp.test_utils import TestClient, TestServer

    from common.clock import Clock
    from common.db import Database
    from common.embedded_pg import EmbeddedPostgres
    from common.jobs import JobQueue
    from common.migrations import migrate
    from common.passwords import hash_password
    from common.runtime import Runtime
    from common.settings import Settings
    from gateway.app import build_app
    from gateway.main import all_migrations
    from mta.store import mailboxes

    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="webmail-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    filled = (tmp / "terms.json").exists()
    pg = EmbeddedPostgres(tmp / "pgdata", delete_on_stop=not args.keep)
    pg.start()
    try:
        dsn = pg.ensure_database("bench")
        if filled:
            terms = json.loads((tmp / "terms.json").read_text())
            db = await Database.connect(dsn, size=5)
            await migrate(db, all_migrations())
        else:
            address_id = await prepare(dsn)
            db = await Database.connect(dsn, size=5)
            async with db.transaction() as conn:
                roles = await mailboxes.ensure_defaults(conn, address_id, datetime.now(UTC))
            t0 = time.perf_counter()
            rows, terms = generate(args.messages)
            await asyncio.to_thread(load, dsn, address_id, roles["inbox"], rows)
            print(f"filled {len(rows)} messages in {time.perf_counter() - t0:.1f} s")
            terms.update(address_id=address_id, inbox=roles["inbox"])
            (tmp / "terms.json").write_text(json.dumps(terms))
        await db.execute(
            "UPDATE mail.addresses SET password_hash = %s WHERE id = %s",
            (await hash_password(PASSWORD), terms["address_id"]),
        )
        await db.execute("ANALYZE")
        settings = Settings(
            public_url="http://127.0.0.1",
            database_url=dsn,
            secret="x" * 40,
            app_env="test",
            data_dir=tmp / "var",
            run_workers=False,
            environ=MappingProxyType(
                {"RATE_LIMIT_PER_SECOND": "1000000", "AUTH_RATE_LIMIT_PER_SECOND": "1000"}
            ),
        )
        clock = Clock()
        runtime = Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock))
        client = TestClient(TestServer(build_app(runtime)))
        await client.start_server()
        try:
            resp = await client.post(
                "/api/mail/login", json={"email": "alice@bench.test", "password": PASSWORD}
            )
            assert resp.status == 200, await resp.text()
            first = await (await client.get("/api/mail/messages?per_page=50")).json()
            print(f"inbox total: {first['total']}")
            one = first["data"][7]["id"]
            cases: list[tuple[str, str]] = [
                ("list: inbox, page 1 of 50, total", "/api/mail/messages?per_page=50"),
                ("list: inbox, page 100 of 50", "/api/mail/messages?per_page=50&page=100"),
                ("list: unread", "/api/mail/messages?per_page=50&unread=true"),
                ("list: has attachment", "/api/mail/messages?per_page=50&has_attachment=true"),
                (
                    "list: search (a word in 1% of mail)",
                    f"/api/mail/messages?per_page=50&search={terms['word_1pct']}",
                ),
                (
                    "list: from (a whole address)",
                    f"/api/mail/messages?per_page=50&from={terms['sender_email']}",
                ),
                ("list: inbox page 1, first after a change", "cold:/api/mail/messages?per_page=50"),
                (
                    "list: search, first after a change",
                    f"cold:/api/mail/messages?per_page=50&search={terms['word_1pct']}",
                ),
                ("read: one message, sanitised", f"/api/mail/messages/{one}"),
                ("read: its reading frame", f"/webmail/frame/{one}"),
                ("folders with counts", "/api/mail/folders"),
            ]
            print(f"{'request':44} {'p50 ms':>8} {'p99 ms':>8}")
            for name, path in cases:
                times: list[float] = []
                cold = path.startswith("cold:")
                path = path.removeprefix("cold:")
                for i in range(args.runs + 5):
                    if cold:  # a new Email state: totals are counted again (query.py)
                        await db.execute(
                            "INSERT INTO mta.changes (address_id, type_name, object_id, change,"
                            " created_at) VALUES (%s, 'Email', gen_random_uuid(), 'updated', now())",
                            (terms["address_id"],),
                        )
                    t = time.perf_counter()
                    resp = await client.get(path)
                    await resp.read()
                    assert resp.status == 200, (path, resp.status)
                    if i >= 5:  # warm-up
                        times.append((time.perf_counter() - t) * 1000)
                print(f"{name:44} {statistics.median(times):8.1f} {pct(times, 0.99):8.1f}")
        finally:
            await client.close()
            await db.close()
    finally:
        pg.stop()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--keep", help="a directory to keep the filled database in, and reuse")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
