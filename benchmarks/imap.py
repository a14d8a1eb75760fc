"""The IMAP server next to Dovecot, the same messages in each, in one run.

    .venv/bin/python benchmarks/imap.py [--messages 10000 100000] [--bodies 1000]
        [--repeats 3] [--runs 3] [--write]

The messages are benchmarks/jmap_query.py's (real MIME, threads, 10% with
attachments, 70% seen), generated once for the largest size and kept in
``--cache`` (a pickle of raw bytes, dates and flags), each size taking the
first n. Ours: one inbox of an embedded PostgreSQL, filled through the
store's own writers as delivery's group commit uses them (``parse_message``,
``RawMessages.put_inline`` and ``emails.insert`` under ``counters.deferred``,
a thousand messages a transaction, two connections each taking whole
threads): no table is written by the benchmark itself.
Dovecot (Debian's dovecot-imapd, ``make imap-server``; tests/mail/
imap_server.py's configuration): the same messages written as Maildir files
(flags in the names), which Dovecot indexes at the first SELECT. Our daemon
runs as ``python -m mta imap``, its own process, as in production.

One imaplib client times, against each server: SELECT INBOX (read-only),
``UID FETCH 1:* (FLAGS ENVELOPE)`` (what a client lists a folder with), first
with the caches cold (our ``mta.imap_cache`` rows for the address dropped,
Dovecot's ``dovecot.index.cache`` deleted while no session is open) and
then warm, ``UID FETCH 1:* (FLAGS)`` (a resync) and a full-body ``FETCH
BODY.PEEK[]`` of ``--bodies`` messages, ``UID SORT`` by date and by
subject and sender, and ``UID THREAD REFERENCES``. Each warm operation is run ``--runs``
times after one warm-up, the median kept. That whole round is done
``--repeats`` times, ours and Dovecot's alternating which goes first, and
each round's ratio (Dovecot's time / ours: our rate as a share of
Dovecot's) is kept; the table shows the median times and the median of the
same-round ratios (the machine is shared: Dovecot's own times move with its
load, so ratios from one round are what compare). The load average is
printed with each round. ``--write`` puts the table into
docs/performance.md ("IMAP server"). ``IMAP_BENCH_PROFILE=file`` runs our
daemon under cProfile.
"""

from __future__ import annotations

import argparse
import asyncio
import imaplib
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.jmap_query import generate  # noqa: E402
from benchmarks.smtp_inbound import prepare  # noqa: E402

PASSWORD = "bench-password"
EMAIL = "alice@bench.test"
LOAD_BATCH = 1000

LOADERS = 2  # connections filling our store at once (whole threads each)

# One message: (raw, received at, JMAP keywords, its thread's key).
Message = tuple[bytes, datetime, list[str], str]


def messages(n: int, cache: Path) -> list[Message]:
    """The first n of the generated messages, generated once (for the largest size
    asked) and kept in ``cache``; a longer list there serves a smaller n."""
    for path in sorted(cache.glob("messages-*.pickle"), key=lambda p: int(p.stem[9:])):
        if int(path.stem[9:]) >= n:
            with path.open("rb") as f:
                kept: list[Message] = pickle.load(f)
            return kept[:n]
    t0 = time.perf_counter()
    rows, _ = generate(n, parse=False)
    out = [(r["raw"], r["received"], r["keywords"], r["thread"]) for r in rows]
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / f"messages-{n}.pickle").open("wb") as f:
        pickle.dump(out, f, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"  generated {n} messages in {time.perf_counter() - t0:.0f} s", flush=True)
    return out


async def fill_ours(dsn: str, data_dir: Path, msgs: list[Message]) -> str:
    """The messages in one inbox, through the store's writers; the address id."""
    from common.blobs import LocalBlobStore
    from common.db import Database
    from common.passwords import hash_password
    from mta.message import parse_message
    from mta.store import counters, emails, mailboxes
    from mta.store.raw import RawMessages

    address_id = await prepare(dsn, sieve=False)
    db = await Database.connect(dsn, size=LOADERS + 1)
    try:
        await db.execute(
            "UPDATE mail.addresses SET password_hash = %s WHERE id = %s",
            (await hash_password(PASSWORD), address_id),
        )
        now = datetime.now(UTC)
        async with db.transaction() as conn:
            roles = await mailboxes.ensure_defaults(conn, address_id, now)
        raw_store = RawMessages(db, LocalBlobStore(data_dir / "blobs"))

        async def load(part: list[Message]) -> None:
            for start in range(0, len(part), LOAD_BATCH):
                async with db.transaction() as conn, counters.deferred(conn):
                    for raw, received, keywords, _thread in part[start : start + LOAD_BATCH]:
                        assert raw_store.inline(len(raw))
                        blob_id = await raw_store.put_inline(conn, raw, now)
                        new = emails.NewEmail(
                            address_id=address_id,
                            blob_id=blob_id,
                            size=len(raw),
                            received_at=received,
                            parsed=parse_message(raw),
                            mailbox_ids=[roles["inbox"]],
                            keywords=keywords,
                        )
                        await emails.insert(conn, new, now)

        # Each loader takes whole threads, so two never resolve one thread at once.
        parts: list[list[Message]] = [[] for _ in range(LOADERS)]
        for m in msgs:
            parts[zlib.crc32(m[3].encode()) % LOADERS].append(m)
        await asyncio.gather(*(load(part) for part in parts))
        # The batches' mailbox counts wait in mta.pending_counts, applied after
        # each COMMIT as delivery does (EXISTS is read from them).
        await counters.apply_pending(db)
        # As autovacuum would have left a mailbox filled over months: visibility
        # map set and hint bits written, so no first read pays for them.
        await db.execute("VACUUM ANALYZE")
    finally:
        await db.close()
    return address_id


def fill_dovecot(root: Path, user: str, msgs: list[Message]) -> None:
    """The same messages as a maildir (what Dovecot stores), flags in the names."""
    cur = root / "mail" / user / "cur"
    for sub in ("cur", "new", "tmp"):
        (root / "mail" / user / sub).mkdir(parents=True, exist_ok=True)
    for i, (raw, received, keywords, _thread) in enumerate(msgs):
        flags = ("F" if "$flagged" in keywords else "") + ("S" if "$seen" in keywords else "")
        stamp = int(received.timestamp())
        path = cur / f"{stamp}.M{i}P1.bench,S={len(raw)}:2,{flags}"
        path.write_bytes(raw)
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
    listing()  # the first listing: each server renders and caches the envelopes
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


class Ours:
    """``python -m mta imap`` over the filled database."""

    def __init__(self, dsn: str, data_dir: Path, address_id: str, code: Path = ROOT) -> None:
        self.dsn, self.address_id = dsn, address_id
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
        # IMAP_BENCH_PROFILE=file: the daemon under cProfile (where the time goes).
        profile = os.environ.get("IMAP_BENCH_PROFILE")
        wrap = ["-m", "cProfile", "-o", profile] if profile else []
        self.proc = subprocess.Popen(
            [sys.executable, *wrap, "-m", "mta", "imap"],
            cwd=code,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.proc.stdout is not None
        self.port = int(self.proc.stdout.readline().decode().rsplit(" ", 1)[1])
        assert self.port, "the daemon did not say its port"

    def cold(self) -> None:
        """Our cache of rendered envelopes dropped (through its own module), and
        the table vacuumed."""
        from common.db import Database
        from mta.store import imap_cache

        async def forget() -> None:
            db = await Database.connect(self.dsn, size=1)
            try:
                async with db.connection() as conn:
                    await imap_cache.forget(conn, self.address_id)
                # A mailbox whose cache was never filled has no dead rows in the
                # table and its index, as this one would after the DELETE.
                await db.execute("VACUUM ANALYZE mta.imap_cache")
            finally:
                await db.close()

        asyncio.run(forget())

    def client(self) -> imaplib.IMAP4:
        client = imaplib.IMAP4("127.0.0.1", self.port)
        client.login(EMAIL, PASSWORD)
        return client

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


class Dovecot:
    def __init__(self, root: Path, msgs: list[Message]) -> None:
        from tests.mail import imap_server

        self.maildir = root / "mail" / "alice"
        filled = (self.maildir / "cur").exists()  # kept from an earlier run (--keep)
        self.server = imap_server.start(root)
        self.server.add_user("alice", PASSWORD)
        if not filled:
            fill_dovecot(root, "alice", msgs)

    def cold(self) -> None:
        """Dovecot's cache file deleted while no session has the mailbox open:
        its next listing reads every message's header again, as ours does."""
        (self.maildir / "dovecot.index.cache").unlink(missing_ok=True)

    def client(self) -> imaplib.IMAP4:
        return self.server.connect("alice")

    def stop(self) -> None:
        self.server.stop()


def one_round(server: Ours | Dovecot, n: int, bodies: int, runs: int) -> dict[str, float]:
    server.cold()
    client = server.client()
    try:
        return measure(client, n, bodies, runs)
    finally:
        client.logout()


NAMES = {
    "select": "EXAMINE INBOX",
    "flags_envelope_first": "UID FETCH 1:* (FLAGS ENVELOPE), first (caches cold)",
    "flags_envelope": "UID FETCH 1:* (FLAGS ENVELOPE)",
    "flags": "UID FETCH 1:* (FLAGS)",
    "bodies": "FETCH BODY.PEEK[] of the first 1,000",
    "sort_date": "UID SORT (REVERSE DATE) UTF-8 ALL",
    "sort_subject": "UID SORT (SUBJECT FROM) UTF-8 ALL",
    "thread": "UID THREAD REFERENCES UTF-8 ALL",
}

# size -> {"ours": [round, ...], "dovecot": [round, ...], "load": [...], "fill": {...}}
Results = dict[int, dict[str, Any]]


def _ratio_cell(ours: list[float], dovecot: list[float]) -> str:
    ratios = [y / x for x, y in zip(ours, dovecot, strict=True)]
    each = ", ".join(f"{r:.2f}" for r in ratios)
    return f"{statistics.median(ratios):.2f} ({each})"


def report(results: Results) -> str:
    before = any("before" in res for res in results.values())
    head = "| messages | operation |" + (" before | before / Dovecot |" if before else "")
    lines = [
        head + " ours | Dovecot | ours / Dovecot (rate): median (rounds) |",
        "|---:|---|" + ("---:|---:|" if before else "") + "---:|---:|---:|",
    ]
    for n, res in results.items():
        for key, label in NAMES.items():
            a = [r[key] for r in res["ours"]]
            b = [r[key] for r in res["dovecot"]]
            cells = [f"{n:,}", label]
            if before:
                old = [r[key] for r in res["before"]]
                cells += [f"{statistics.median(old) * 1000:.0f} ms", _ratio_cell(old, b)]
            cells += [
                f"{statistics.median(a) * 1000:.0f} ms",
                f"{statistics.median(b) * 1000:.0f} ms",
                _ratio_cell(a, b),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def loads(results: Results) -> str:
    return "; ".join(
        f"{n:,}: filled ours in {r['fill']['ours']:.0f} s, Dovecot's maildir in"
        f" {r['fill']['dovecot']:.0f} s; load average during the rounds "
        + ", ".join(f"{a:.1f}-{b:.1f}" for a, b in r["load"])
        for n, r in results.items()
    )


async def bench_size(n: int, args: argparse.Namespace) -> dict[str, Any]:
    from common.embedded_pg import EmbeddedPostgres

    # --keep DIR: the filled stores stay in DIR/n, and a later run measures them again.
    tmp = Path(args.keep) / str(n) if args.keep else Path(tempfile.mkdtemp(prefix="imap-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    msgs = messages(n, Path(args.cache))
    pg = EmbeddedPostgres(tmp / "pgdata", delete_on_stop=not args.keep)
    pg.start()
    servers: dict[str, Ours | Dovecot] = {}
    try:
        dsn = pg.ensure_database("bench")
        t0 = time.perf_counter()
        kept = tmp / "address_id"
        if kept.exists():
            address_id = kept.read_text()
        else:
            address_id = await fill_ours(dsn, tmp / "data", msgs)
            kept.write_text(address_id)
        fill_ours_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        servers["dovecot"] = await asyncio.to_thread(Dovecot, tmp / "dovecot", msgs)
        fill_dovecot_s = time.perf_counter() - t0
        print(f"  filled: ours {fill_ours_s:.0f} s, Dovecot {fill_dovecot_s:.0f} s", flush=True)
        servers["ours"] = Ours(dsn, tmp / "data", address_id)
        if args.before:
            servers["before"] = Ours(dsn, tmp / "data", address_id, Path(args.before))
        bodies = min(args.bodies, n)
        res: dict[str, Any] = {"load": [], **{key: [] for key in servers}}
        res["fill"] = {"ours": fill_ours_s, "dovecot": fill_dovecot_s}
        for i in range(args.repeats):
            before = os.getloadavg()[0]
            keys = list(servers)
            for key in keys[i % len(keys) :] + keys[: i % len(keys)]:  # each goes first in turn
                res[key].append(
                    await asyncio.to_thread(one_round, servers[key], n, bodies, args.runs)
                )
            res["load"].append((before, os.getloadavg()[0]))
            print(f"  round {i + 1}: load average {before:.1f} to {res['load'][-1][1]:.1f}")
            print(report({n: {**res, **{key: res[key][-1:] for key in servers}}}))
        return res
    finally:
        for server in servers.values():
            server.stop()
        pg.stop()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


async def main_async(args: argparse.Namespace) -> Results:
    results: Results = {}
    for n in args.messages:
        print(f"{n} messages", flush=True)
        results[n] = await bench_size(n, args)
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--bodies", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--cache", default=os.path.join(tempfile.gettempdir(), "imap-bench-messages")
    )
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--keep", help="keep the filled stores in this directory and reuse them")
    parser.add_argument(
        "--before",
        help="a checkout of an earlier version (git worktree): its daemon timed too, same rounds",
    )
    args = parser.parse_args()
    results = asyncio.run(main_async(args))
    table = report(results)
    print(table)
    print(loads(results))
    if args.write:
        from benchmarks.performance_doc import replace_section

        replace_section("IMAP server", SECTION.format(table=table, loads=loads(results)))


SECTION = """
`benchmarks/imap.py`: one inbox, the same messages in our store and in a
Dovecot maildir (Debian's dovecot-imapd), one imaplib client on the
loopback. Our daemon is `python -m mta imap` in its own process. Times are
medians; the last column is our rate as a share of Dovecot's (1.00: as
fast; the aim on listing paths is at least 0.5), the median of the ratios
of rounds in which both servers ran back to back.

{table}

{loads}.
"""


if __name__ == "__main__":
    main()
