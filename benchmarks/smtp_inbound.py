"""Benchmark of the SMTP inbound daemon against a durable Postfix, in one run.

    .venv/bin/python benchmarks/smtp_inbound.py [--messages 2000] [--sessions 10]
        [--size 10240] [--processes N] [--database-url postgresql://...] [--write-docs]

Postfix's smtp-source (the load generator) sends ``--messages`` messages of
``--size`` bytes over ``--sessions`` concurrent SMTP sessions, first to
Postfix's smtp-sink (accepts and throws away: the ceiling of this machine
and client), then to bare aiosmtpd, then to a private Postfix instance
(benchmarks/postfix.py) storing bench.test in a Maildir (250 once its queue
file is fsynced: the peer), then to ``python -m mta smtp`` (recipient lookup,
SPF/DKIM/DMARC against a loopback DNS server, the rows and the raw message
committed, and only then 250). Afterwards every message is counted in the
store: the daemon's rate counts only messages that are durably stored.

smtp-source and smtp-sink come from Debian's postfix package; when missing,
the script installs it with apt-get (no service is started: policy-rc.d says
no; the system's Postfix is never run, only the private instance, which is
stopped at the end). With no --database-url an embedded
PostgreSQL (pgserver) runs in a temporary directory. --write-docs rewrites
the "SMTP inbound" section of docs/performance.md. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.performance_doc import replace_section  # noqa: E402
from benchmarks.processes import free_port, postgres_pids, process_cpu_seconds  # noqa: E402

SECTION = "## SMTP inbound"
ANALYSIS = (
    "smtp-sink (stores nothing) and bare aiosmtpd (stores nothing) are ceilings of this\n"
    "machine and client; Postfix is the peer: it answers 250 once its queue file is\n"
    "fsynced and delivers to a Maildir right after, as ours answers once the rows and\n"
    "the raw message are committed. Where each message's time goes, what the\n"
    'throughput work changed and what is left: "Mail throughput against Postfix\n'
    '(issue 25)" below.\n'
)
SECRET = "benchmark-secret-" + "x" * 40
RCPT = "alice@bench.test"


@dataclass
class Result:
    name: str
    seconds: float
    messages: int
    stored: int | None = None
    cpu_ms: float | None = None  # the servers' CPU per message
    db_cpu_ms: float | None = None  # PostgreSQL's CPU per message

    @property
    def rate(self) -> float:
        return self.messages / self.seconds


def ensure_postfix_tools() -> None:
    if shutil.which("smtp-source") and shutil.which("smtp-sink"):
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    policy = Path("/usr/sbin/policy-rc.d")
    created = not policy.exists()
    if created:
        # Keep the package from starting a postfix service while it installs.
        policy.write_text("#!/bin/sh\nexit 101\n")
        policy.chmod(0o755)
    try:
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "postfix"],
            check=True,
            env=env,
        )
    finally:
        if created:
            policy.unlink()
    if not (shutil.which("smtp-source") and shutil.which("smtp-sink")):
        sys.exit("smtp-source/smtp-sink not found after installing postfix")


def wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"nothing listens on {port}")


def smtp_source(port: int, args: argparse.Namespace) -> float:
    """Run smtp-source against 127.0.0.1:port; the wall-clock seconds it took."""
    command = [
        "smtp-source",
        "-s", str(args.sessions),
        "-m", str(args.messages),
        "-l", str(args.size),
        "-M", "client.bench.test",
        "-f", "sender@source.bench.test",
        "-t", RCPT,
        *(["-d"] if args.reuse else []),
        f"127.0.0.1:{port}",
    ]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - started


def bench_sink(args: argparse.Namespace) -> Result:
    port = free_port()
    # smtp-sink refuses to run as root without a user to switch to.
    user = ["-u", "nobody"] if os.geteuid() == 0 else []
    sink = subprocess.Popen(["smtp-sink", *user, f"127.0.0.1:{port}", "256"])
    try:
        wait_listening(port, sink)
        seconds = smtp_source(port, args)
    finally:
        sink.terminate()
        sink.wait()
    return Result("smtp-sink (stores nothing)", seconds, args.messages)


def bench_postfix(args: argparse.Namespace, tmp: Path) -> Result:
    """A private Postfix storing for bench.test in a Maildir: 250 after its queue file is
    fsynced (its durable acceptance), the Maildir delivered right after, as ours is."""
    from benchmarks import postfix

    base = tmp / f"postfix-{time.monotonic_ns()}"
    maildir = base / "mail"
    maildir.mkdir(parents=True)
    shutil.chown(maildir, "nobody", "nogroup")
    port = free_port()
    conf = postfix.start(
        base,
        port,
        [
            "virtual_mailbox_domains = bench.test",
            f"virtual_mailbox_base = {maildir}",
            "virtual_mailbox_maps = static:alice/",  # a trailing slash: Maildir
            "virtual_uid_maps = static:65534",
            "virtual_gid_maps = static:65534",
            "virtual_destination_concurrency_limit = 20",
        ],
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit("postfix did not listen")
                time.sleep(0.05)
        seconds = smtp_source(port, args)
        postfix.wait_empty(conf)
        stored = sum(1 for _ in (maildir / "alice" / "new").iterdir())
    finally:
        postfix.stop(conf)
    return Result(
        "Postfix 3.7 (queue file fsynced before 250, then Maildir)", seconds, args.messages, stored
    )


def serve_bare(port: int) -> None:
    """aiosmtpd answering 250 to everything and storing nothing: the framework's own cost."""
    import logging

    import uvloop
    from aiosmtpd.smtp import SMTP

    class Accept:
        async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
            return "250 OK"

    async def main() -> None:
        loop = asyncio.get_running_loop()
        await loop.create_server(
            lambda: SMTP(Accept(), hostname="bare", enable_SMTPUTF8=True, loop=loop),
            "127.0.0.1",
            port,
            reuse_port=True,
        )
        await asyncio.Event().wait()

    logging.getLogger("mail.log").setLevel(logging.WARNING)
    uvloop.run(main())


def bench_bare(args: argparse.Namespace) -> Result:
    port = free_port()
    servers = [
        subprocess.Popen([sys.executable, __file__, "--serve-bare", str(port)])
        for _ in range(args.processes)
    ]
    try:
        for server in servers:
            wait_listening(port, server)
        seconds = smtp_source(port, args)
    finally:
        for server in servers:
            server.terminate()
            server.wait()
    return Result(f"bare aiosmtpd x{args.processes} (stores nothing)", seconds, args.messages)


# Run on every message, as a user's filter would be: tests two header fields and
# keeps the message (nothing matches smtp-source's mail).
SIEVE = """require ["fileinto"];
if anyof (header :contains "subject" "[newsletter]", address :is "from" "noreply@ads.test") {
    fileinto "Junk";
}
"""


async def prepare(dsn: str, *, sieve: bool = True) -> str:
    """Migrate, and create one hosted address (with a Sieve filter); return its id."""
    from datetime import UTC, datetime

    from common.db import Database
    from common.migrations import migrate
    from gateway.main import all_migrations

    now = datetime.now(UTC)
    db = await Database.connect(dsn, size=1)
    try:
        await migrate(db, all_migrations())
        account = await db.fetch_val(
            "INSERT INTO mail.accounts (email, password_hash, referral_code, created_at, updated_at)"
            " VALUES ('bench@panel.test', 'x', 'bench', %s, %s) RETURNING id",
            (now, now),
        )
        domain = await db.fetch_val(
            "INSERT INTO mail.domains (account_id, name, created_at, updated_at)"
            " VALUES (%s, 'bench.test', %s, %s) RETURNING id",
            (account, now, now),
        )
        address = str(
            await db.fetch_val(
                "INSERT INTO mail.addresses"
                " (domain_id, local_part, password_hash, quota_bytes, created_at, updated_at)"
                " VALUES (%s, 'alice', 'x', 0, %s, %s) RETURNING id",
                (domain, now, now),
            )
        )
        if sieve:
            await db.execute(
                "INSERT INTO mta.filters"
                " (account_id, address_id, name, script, created_at, updated_at)"
                " VALUES (%s, %s, 'bench', %s, %s, %s)",
                (account, address, SIEVE, now, now),
            )
        return address
    finally:
        await db.close()


async def count_stored(dsn: str, address_id: str) -> int:
    from common.db import Database

    db = await Database.connect(dsn, size=1)
    try:
        return int(
            await db.fetch_val(
                "SELECT count(*) FROM mta.emails WHERE address_id = %s", (address_id,)
            )
        )
    finally:
        await db.close()


def daemon_env(dsn: str, data_dir: Path, port: int, dns: str, **extra: str) -> dict[str, str]:
    """The environment of a ``python -m mta smtp`` on loopback ``port``."""
    return {
        **os.environ,
        "DATABASE_URL": dsn,
        "DATA_DIR": str(data_dir),
        "SECRET": SECRET,
        "APP_ENV": "production",
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": str(port),
        "SMTP_HOSTNAME": "mx.bench.test",
        "DNS_RESOLVERS": dns,
        **extra,
    }


def start_daemon(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "mta", "smtp"], cwd=ROOT, env=env, stdout=out, stderr=out
        )


async def bench_daemon(
    args: argparse.Namespace,
    dsn: str,
    data_dir: Path,
    address_id: str,
    db_pids: Callable[[], list[int]] | None,
) -> Result:
    from tests.mta.dnsserver import LoopbackDNS

    stored_before = await count_stored(dsn, address_id)
    dns = LoopbackDNS().start()  # answers NXDOMAIN: SPF none, DKIM none, DMARC none
    port = free_port()
    env = daemon_env(
        dsn,
        data_dir,
        port,
        dns.address,
        DB_POOL_SIZE=str(max(args.sessions, 5)),
        SMTP_REUSE_PORT="true",
    )
    daemons = []
    try:
        for n in range(args.processes):
            daemon = await asyncio.to_thread(start_daemon, env, data_dir / f"mta-{n}.log")
            daemons.append(daemon)
            await asyncio.to_thread(wait_listening, port, daemon)
        cpu_before = sum(process_cpu_seconds(d.pid) for d in daemons)
        db_before = {pid: process_cpu_seconds(pid) for pid in db_pids()} if db_pids else {}
        seconds = await asyncio.to_thread(smtp_source, port, args)
        cpu = sum(process_cpu_seconds(d.pid) for d in daemons) - cpu_before
        db_cpu = None
        if db_pids:
            db_after = {pid: process_cpu_seconds(pid) for pid in db_pids()}
            # A backend that connected during the run spent all its CPU in it.
            db_cpu = sum(db_after[p] - db_before.get(p, 0.0) for p in db_after)
    finally:
        for daemon in daemons:
            daemon.terminate()
            daemon.wait()
        dns.stop()
    stored = await count_stored(dsn, address_id) - stored_before
    name = f"mta smtp x{args.processes} (stored, fsynced, committed)"
    return Result(
        name,
        seconds,
        args.messages,
        stored,
        cpu / args.messages * 1000,
        None if db_cpu is None else db_cpu / args.messages * 1000,
    )


Run = tuple[str, Result, Result, Result, Result]  # mode, sink, bare, Postfix, ours


def report(args: argparse.Namespace, runs: list[Run]) -> str:
    lines = [
        f"Run on {platform.machine()} with {os.cpu_count()} cores, Python "
        f"{platform.python_version()}: {args.messages} messages of {args.size} bytes over "
        f"{args.sessions} concurrent sessions (Postfix smtp-source), one recipient each"
        f"{' with a Sieve filter' if args.sieve else ''};"
        f" {args.processes} daemon processes on one port (SO_REUSEPORT). Load average when"
        f" the run ended: {os.getloadavg()[0]:.1f}.",
        "",
        "| sessions | server | seconds | messages/s | stored | of Postfix |"
        " daemon CPU ms/message | PostgreSQL CPU ms/message |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for mode, sink, bare, theirs, daemon in runs:
        lines += [
            f"| {mode} | {sink.name} | {sink.seconds:.2f} | {sink.rate:.0f} | - |"
            f" {sink.rate / theirs.rate:.2f} | - | - |",
            f"| {mode} | {bare.name} | {bare.seconds:.2f} | {bare.rate:.0f} | - |"
            f" {bare.rate / theirs.rate:.2f} | - | - |",
            f"| {mode} | {theirs.name} | {theirs.seconds:.2f} | {theirs.rate:.0f} |"
            f" {theirs.stored} | 1.00 | - | - |",
            f"| {mode} | {daemon.name} | {daemon.seconds:.2f} | {daemon.rate:.0f} |"
            f" {daemon.stored} | **{daemon.rate / theirs.rate:.2f}** | {daemon.cpu_ms:.2f} |"
            f" {'-' if daemon.db_cpu_ms is None else f'{daemon.db_cpu_ms:.2f}'} |",
        ]
    lines.append("")
    for mode, _sink, bare, _theirs, daemon in runs:
        lines.append(
            f"- {mode}: every message answered 250 was counted in the store afterwards"
            f" ({daemon.stored} of {daemon.messages}); the daemon does"
            f" {daemon.rate / bare.rate:.0%} of bare aiosmtpd's rate."
        )
    lines.append("")
    lines.append(
        "Target: at least 0.6 of Postfix's durable acceptance rate, every message durably stored."
    )
    return "\n".join(lines)


def write_docs(body: str) -> None:
    intro = (
        "What `benchmarks/smtp_inbound.py` measures: `python -m mta smtp` receiving mail\n"
        "from Postfix's smtp-source next to a private Postfix storing the same mail\n"
        "durably, in the same run on the same machine. For the daemon a message counts\n"
        "once its 250 was sent, which happens only after its rows and raw message were\n"
        "committed; SPF, DKIM and DMARC run against a loopback DNS server.\n"
    )
    replace_section(SECTION.removeprefix("## "), f"{intro}\n{body}\n\n{ANALYSIS}")


@asynccontextmanager
async def database(url: str | None, tmp: Path, name: str) -> AsyncIterator[tuple[str, Any]]:
    """(dsn, the embedded server or None): ``url``, or an embedded PostgreSQL in ``tmp``."""
    if url:
        yield url, None
        return
    from common.embedded_pg import EmbeddedPostgres

    pg = EmbeddedPostgres(tmp / "pgdata", delete_on_stop=True)
    await asyncio.to_thread(pg.start)
    try:
        yield await asyncio.to_thread(pg.ensure_database, name), pg
    finally:
        await asyncio.to_thread(pg.stop)


async def run(args: argparse.Namespace) -> None:
    ensure_postfix_tools()
    with tempfile.TemporaryDirectory(prefix="smtp-bench-") as tmp:
        os.chmod(tmp, 0o755)  # Postfix's daemons (users postfix, nobody) walk into it
        async with database(args.database_url, Path(tmp), "smtp_bench") as (dsn, pg):
            runs: list[Run] = []
            db_pids = postgres_pids(pg.pgdata) if pg is not None else None
            address_id = await prepare(dsn, sieve=args.sieve)
            modes = [("new connection per message", False), ("session reuse (-d)", True)]
            for mode, reuse in modes if args.modes == "both" else modes[:1]:
                args.reuse = reuse
                sink = await asyncio.to_thread(bench_sink, args)
                bare = await asyncio.to_thread(bench_bare, args)
                theirs = await asyncio.to_thread(bench_postfix, args, Path(tmp))
                daemon = await bench_daemon(args, dsn, Path(tmp), address_id, db_pids)
                runs.append((mode, sink, bare, theirs, daemon))
    body = report(args, runs)
    print(body)
    for _mode, _sink, _bare, _theirs, daemon in runs:
        if daemon.stored != daemon.messages:
            sys.exit(f"stored {daemon.stored} of {daemon.messages} messages")
    if args.write_docs:
        write_docs(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--size", type=int, default=10240)
    parser.add_argument(
        "--processes", type=int, default=os.cpu_count() or 1, help="daemon processes (one port)"
    )
    parser.add_argument("--database-url", default=None)
    parser.add_argument(
        "--modes",
        choices=("both", "connection"),
        default="both",
        help="a new connection per message only, or that and session reuse (smtp-source -d)",
    )
    parser.add_argument(
        "--no-sieve",
        dest="sieve",
        action="store_false",
        help="no Sieve filter on the benchmark address (by default one runs on every message)",
    )
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--serve-bare", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.reuse = False
    if args.serve_bare:
        serve_bare(args.serve_bare)
        return
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
