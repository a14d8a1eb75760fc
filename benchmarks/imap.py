"""The IMAP server next to Dovecot, the same messages in each, in one run.

    .venv/bin/python benchmarks/imap.py [--messages 10000 100000] [--bodies 1000] [--write]

For each size: the messages of benchmarks/jmap_query.py's generator (real
MIME, threads, 10% with attachments, 70% seen) are loaded into one inbox of
an embedded PostgreSQL (COPY, as the JMAP benchmarks do) and written as the
maildir of a Dovecot user (Debian's dovecot-imapd, ``make imap-server``;
tests/mail/imap_server.py's configuration). Our daemon runs as ``python -m
mta imap``, its own process, as in production. One imaplib client times,
against each server: SELECT INBOX, ``UID FETCH 1:* (FLAGS ENVELOPE)`` (what a
client lists a folder with), ``UID FETCH 1:* (FLAGS)`` (a resync) and a
full-body ``FETCH BODY.PEEK[]`` of ``--bodies`` messages, ``UID SORT`` by
date and by subject and sender, and ``UID THREAD REFERENCES``. Each is run
``--runs`` times after one warm-up (Dovecot builds its index caches on the
first); the median is reported, and our rate as a share of Dovecot's.
``--write`` puts the table into docs/performance.md ("IMAP server").
"""

from __future__ import annotations

import argparse
import asyncio
import imaplib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.jmap_query import generate, load  # noqa: E402
from benchmarks.smtp_inbound import prepare  # noqa: E402

PASSWORD = "bench-password"


async def fill_ours(dsn: str, rows: list[dict[str, Any]]) -> str:
    from common.db import Database
    from common.passwords import hash_password
    from mta.store import mailboxes

    address_id = await prepare(dsn)
    db = await Database.connect(dsn, size=2)
    try:
        await db.execute(
            "UPDATE mail.addresses SET password_hash = %s WHERE id = %s",
            (await hash_password(PASSWORD), address_id),
        )
        async with db.transaction() as conn:
            roles = await mailboxes.ensure_defaults(conn, address_id, datetime.now(UTC))
        await asyncio.to_thread(load, dsn, address_id, roles["inbox"], rows)
        await db.execute("ANALYZE")
    finally:
        await db.close()
    return "alice@bench.test"


def fill_dovecot(root: Path, user: str, rows: list[dict[str, Any]]) -> None:
    """The same messages as a maildir (what Dovecot stores), flags in the names."""
    cur = root / "mail" / user / "cur"
    for sub in ("cur", "new", "tmp"):
        (root / "mail" / user / sub).mkdir(parents=True, exist_ok=True)
    for i, row in enumerate(rows):
        flags = ("F" if "$flagged" in row["keywords"] else "") + (
            "S" if "$seen" in row["keywords"] else ""
        )
        stamp = int(row["received"].timestamp())
        path = cur / f"{stamp}.M{i}P1.bench,S={len(row['raw'])}:2,{flags}"
        path.write_bytes(row["raw"])
        os.utime(path, (stamp, stamp))
    # As root the mail belongs to Dovecot's user (tests/mail/imap_server.py).
    owner = (root / "mail").stat()
    for dirpath, _dirs, files in os.walk(root / "mail"):
        os.chown(dirpath, owner.st_uid, owner.st_gid)
        for name in files:
            os.chown(os.path.join(dirpath, name), owner.st_uid, owner.st_gid)


def timed(fn: Any, runs: int) -> float:
    fn()  # warm-up: Dovecot builds its caches, our pool connects
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def measure(client: imaplib.IMAP4, n: int, bodies: int, runs: int) -> dict[str, float]:
    def select() -> None:
        typ, data = client.select("INBOX", readonly=True)
        assert typ == "OK" and int(data[0]) == n, data

    def listing() -> None:
        typ, data = client.uid("FETCH", "1:*", "(FLAGS ENVELOPE)")
        assert typ == "OK" and len(data) >= n, len(data)

    def flags() -> None:
        typ, data = client.uid("FETCH", "1:*", "(FLAGS)")
        assert typ == "OK" and len(data) == n, len(data)

    def full() -> None:
        typ, data = client.fetch(f"1:{bodies}", "(BODY.PEEK[])")
        assert typ == "OK" and len([d for d in data if isinstance(d, tuple)]) == bodies

    def sorting(keys: str) -> Any:
        def run() -> None:
            typ, data = client.uid("SORT", keys, "UTF-8", "ALL")
            assert typ == "OK" and len(data[0].split()) == n, typ

        return run

    def threading() -> None:
        typ, data = client.uid("THREAD", "REFERENCES", "UTF-8", "ALL")
        assert typ == "OK" and data[0], typ

    select()
    t0 = time.perf_counter()
    listing()  # the first listing: Dovecot and our daemon render and cache envelopes
    first = time.perf_counter() - t0
    return {
        "select": timed(select, runs),
        "flags_envelope_first": first,
        "flags_envelope": timed(listing, runs),
        "flags": timed(flags, runs),
        "bodies": timed(full, runs),
        "sort_date": timed(sorting("(REVERSE DATE)"), runs),
        "sort_subject": timed(sorting("(SUBJECT FROM)"), runs),
        "thread": timed(threading, runs),
    }


def ours(dsn: str, data_dir: Path, email: str, n: int, bodies: int, runs: int) -> dict[str, float]:
    env = {
        **os.environ,
        "DATABASE_URL": dsn,
        "DATA_DIR": str(data_dir),
        "IMAP_PORT": "0",
        "IMAPS_PORT": "off",
        "SUBMISSION_PLAINTEXT_LOOPBACK": "true",
        "SECRET": "bench-" + "x" * 40,
        "LOG_LEVEL": "WARNING",
    }
    # IMAP_BENCH_PROFILE=file: the daemon under cProfile (docs/performance.md says where time goes).
    profile = os.environ.get("IMAP_BENCH_PROFILE")
    wrap = ["-m", "cProfile", "-o", profile] if profile else []
    proc = subprocess.Popen(
        [sys.executable, *wrap, "-m", "mta", "imap"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        port = int(line.rsplit(" ", 1)[1])
        client = imaplib.IMAP4("127.0.0.1", port)
        client.login(email, PASSWORD)
        try:
            return measure(client, n, bodies, runs)
        finally:
            client.logout()
    finally:
        proc.terminate()
        proc.wait(10)


def dovecot(
    root: Path, rows: list[dict[str, Any]], n: int, bodies: int, runs: int
) -> dict[str, float]:
    from tests.mail import imap_server

    server = imap_server.start(root)
    try:
        server.add_user("alice", PASSWORD)
        fill_dovecot(root, "alice", rows)
        client = server.connect("alice")
        try:
            return measure(client, n, bodies, runs)
        finally:
            client.logout()
    finally:
        server.stop()


def report(results: dict[int, dict[str, dict[str, float]]]) -> str:
    lines = [
        "| messages | operation | ours | Dovecot | ours / Dovecot (rate) |",
        "|---:|---|---:|---:|---:|",
    ]
    names = {
        "select": "EXAMINE INBOX",
        "flags_envelope_first": "UID FETCH 1:* (FLAGS ENVELOPE), first (caches cold)",
        "flags_envelope": "UID FETCH 1:* (FLAGS ENVELOPE)",
        "flags": "UID FETCH 1:* (FLAGS)",
        "bodies": "FETCH BODY.PEEK[] of the first --bodies (1,000)",
        "sort_date": "UID SORT (REVERSE DATE) UTF-8 ALL",
        "sort_subject": "UID SORT (SUBJECT FROM) UTF-8 ALL",
        "thread": "UID THREAD REFERENCES UTF-8 ALL",
    }
    for n, sides in results.items():
        for key, label in names.items():
            a, b = sides["ours"][key], sides["dovecot"][key]
            lines.append(
                f"| {n:,} | {label} | {a * 1000:.0f} ms | {b * 1000:.0f} ms | {b / a:.2f} |"
            )
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> dict[int, dict[str, dict[str, float]]]:
    from common.embedded_pg import EmbeddedPostgres

    results: dict[int, dict[str, dict[str, float]]] = {}
    for n in args.messages:
        tmp = Path(tempfile.mkdtemp(prefix=f"imap-bench-{n}-"))
        print(f"generating {n} messages", flush=True)
        rows, _ = generate(n)
        pg = EmbeddedPostgres(tmp / "pgdata", delete_on_stop=True)
        pg.start()
        try:
            dsn = pg.ensure_database("bench")
            email = await fill_ours(dsn, rows)
            bodies = min(args.bodies, n)
            theirs = await asyncio.to_thread(dovecot, tmp / "dovecot", rows, n, bodies, args.runs)
            mine = await asyncio.to_thread(ours, dsn, tmp / "data", email, n, bodies, args.runs)
        finally:
            pg.stop()
        results[n] = {"ours": mine, "dovecot": theirs}
        print(report({n: results[n]}), flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--bodies", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    results = asyncio.run(main_async(args))
    table = report(results)
    print(table)
    if args.write:
        from benchmarks.performance_doc import replace_section

        replace_section("IMAP server", SECTION.format(table=table))


SECTION = """
`benchmarks/imap.py`: one inbox, the same messages in our store and in a
Dovecot maildir (Debian's dovecot-imapd, its index built by a warm-up), one
imaplib client on the loopback, the median of three runs after a warm-up.
Our daemon is `python -m mta imap` in its own process. The last column is our
rate as a share of Dovecot's (1.00: as fast; the aim on listing paths is at
least 0.5). The first listing (`first (caches cold)`, one run, before the
warm-up) is timed apart: it is where Dovecot builds its cache file and we
render and keep ENVELOPEs (`mta.imap_cache`).

{table}

Where the time goes and the before/after of the ENVELOPE/BODYSTRUCTURE cache
(issue 24): this section's history in git (`--write` replaced it).
"""


if __name__ == "__main__":
    main()
