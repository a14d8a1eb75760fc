"""Benchmark of sending: submission (accepted, queued durably) and delivery, next to Postfix.

    .venv/bin/python benchmarks/submission.py [--messages 2000] [--sessions 10]
        [--size 10240] [--database-url postgresql://...] [--write-docs]

One load generator (aiosmtplib, ``--sessions`` concurrent sessions, each
reused for its share of ``--messages`` messages of ``--size`` bytes) sends:

* to ``python -m mta submission`` (AUTH PLAIN once per session, the sender
  checked, the message committed to the outbound queue before the 250), then
  ``python -m mta outbound`` delivers the queue (DKIM-signed with the domain's
  RSA-2048 key) to Postfix's smtp-sink on the loopback (OUTBOUND_RELAY);
* to a private Postfix instance (its own config and queue directories under a
  temporary directory, its own ports) configured as a relay to the same
  smtp-sink: first with ``defer_transports = smtp`` so the acceptance is
  measured alone (queue files fsynced before the 250, as Postfix does), then
  delivery released (``postqueue -f``) and timed until its queue is empty.

Both listen on plaintext loopback: Postfix has no SASL here (it would need
Dovecot or Cyrus), so it relays for 127.0.0.0/8 without AUTH, and our
daemon runs with SUBMISSION_PLAINTEXT_LOOPBACK (AUTH without TLS from the
loopback). Postfix signs nothing; ours signs every message.

Debian's postfix is installed with apt-get when missing (no service started).
With no --database-url an embedded PostgreSQL runs in a temporary
directory. --write-docs rewrites the "Submission and delivery" section of
docs/performance.md. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

import aiosmtplib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import postfix  # noqa: E402
from benchmarks.performance_doc import replace_section  # noqa: E402
from benchmarks.processes import (  # noqa: E402
    Sampler,
    free_port,
    postgres_pids,
    process_cpu_seconds,
    top_functions,
)
from benchmarks.smtp_inbound import (  # noqa: E402
    SECRET,
    database,
    ensure_postfix_tools,
    wait_listening,
)

SECTION = "Submission and delivery"
SENDER = "alice@bench.test"
PASSWORD = "benchmark password"
RCPT_DOMAIN = "remote.bench.test"


def message(n: int, size: int) -> bytes:
    msg = EmailMessage()
    msg["From"] = SENDER
    msg["To"] = f"user{n % 50}@{RCPT_DOMAIN}"
    msg["Subject"] = f"benchmark message {n}"
    msg["Message-ID"] = f"<bench-{n}@bench.test>"
    msg["Date"] = "Mon, 01 Jan 2030 12:00:00 +0000"
    line = "The quick brown fox jumps over the lazy dog. " * 2
    msg.set_content((line + "\n") * max(1, size // (len(line) + 1)))
    return msg.as_bytes()


async def load(port: int, args: argparse.Namespace, *, login: bool) -> float:
    """Send every message over ``--sessions`` reused sessions; the wall-clock seconds."""
    bodies = [message(n, args.size) for n in range(args.messages)]
    queue: asyncio.Queue[int] = asyncio.Queue()
    for n in range(args.messages):
        queue.put_nowait(n)

    async def session() -> None:
        client = aiosmtplib.SMTP(hostname="127.0.0.1", port=port, start_tls=False, timeout=60)
        await client.connect()
        if login:
            await client.login(SENDER, PASSWORD)
        try:
            while not queue.empty():
                n = queue.get_nowait()
                errors, _ = await client.sendmail(
                    SENDER, [f"user{n % 50}@{RCPT_DOMAIN}"], bodies[n]
                )
                if errors:
                    raise RuntimeError(f"refused: {errors}")
        finally:
            await client.quit()

    started = time.perf_counter()
    await asyncio.gather(*(session() for _ in range(args.sessions)))
    return time.perf_counter() - started


async def prepare(dsn: str) -> None:
    """Migrate; the sending account, domain, address (with its password) and DKIM key."""
    from datetime import UTC, datetime

    from common.db import Database
    from common.migrations import migrate
    from common.passwords import hash_password
    from gateway.main import all_migrations
    from mail.dkim import keys
    from mail.dkim import store as dkim_store

    now = datetime.now(UTC)
    db = await Database.connect(dsn, size=1)
    try:
        await migrate(db, all_migrations())
        await db.execute("TRUNCATE mta.outbound_messages CASCADE")
        if await db.fetch_val("SELECT count(*) FROM mail.domains WHERE name = 'bench.test'"):
            return
        account = await db.fetch_val(
            "INSERT INTO mail.accounts (email, password_hash, referral_code, created_at, updated_at)"
            " VALUES ('sender@panel.test', 'x', 'sendbench', %s, %s) RETURNING id",
            (now, now),
        )
        domain = await db.fetch_val(
            "INSERT INTO mail.domains (account_id, name, created_at, updated_at)"
            " VALUES (%s, 'bench.test', %s, %s) RETURNING id::text",
            (account, now, now),
        )
        await db.execute(
            "INSERT INTO mail.addresses"
            " (domain_id, local_part, password_hash, quota_bytes, created_at, updated_at)"
            " VALUES (%s, 'alice', %s, 0, %s, %s)",
            (domain, await hash_password(PASSWORD), now, now),
        )
        pair = keys.generate_sync(keys.RSA)
        async with db.transaction() as conn:
            await dkim_store.insert(
                conn,
                domain_id=domain,
                selector="bench",
                algorithm=keys.RSA,
                private_key_sealed=keys.seal_private_key(keys.dkim_sealer(SECRET), pair),
                public_key_b64=pair.public_key_b64,
                active=True,
                now=now,
            )
    finally:
        await db.close()


async def delivered(dsn: str) -> int:
    from common.db import Database

    db = await Database.connect(dsn, size=1)
    try:
        return int(
            await db.fetch_val(
                "SELECT count(*) FROM mta.outbound_recipients WHERE status = 'delivered'"
            )
        )
    finally:
        await db.close()


def mta_env(dsn: str, data_dir: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": dsn,
        "DATA_DIR": str(data_dir),
        "SECRET": SECRET,
        "APP_ENV": "production",
        "SMTP_HOST": "127.0.0.1",
        "SMTP_HOSTNAME": "mx.bench.test",
        "SUBMISSIONS_PORT": "off",
        "SUBMISSION_PLAINTEXT_LOOPBACK": "true",
        "OUTBOUND_MTA_STS": "false",
        **extra,
    }


def start(daemon: str, env: dict[str, str], log: Path, ready: str) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mta", daemon], cwd=ROOT, env=env, stdout=out, stderr=out
        )
    deadline = time.monotonic() + 60
    while ready not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            sys.exit(f"mta {daemon} did not start:\n{log.read_text()}")
        time.sleep(0.02)
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@dataclass
class Ours:
    submit: float  # seconds
    deliver: float
    # CPU per message (ms): the daemon (with its signing processes), PostgreSQL.
    submit_cpu: float
    submit_db_cpu: float | None
    deliver_cpu: float
    deliver_db_cpu: float | None


def tree_cpu_seconds(pid: int) -> float:
    """CPU of a process and its children (the outbound worker's signing processes)."""
    import psutil

    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    return sum(process_cpu_seconds(p.pid) for p in procs)


def db_cpu_seconds(db_pids: Callable[[], list[int]] | None) -> dict[int, float]:
    return {pid: process_cpu_seconds(pid) for pid in db_pids()} if db_pids else {}


def db_spent(db_pids: Callable[[], list[int]] | None, before: dict[int, float]) -> float | None:
    if not db_pids:
        return None
    # A backend that connected during the run spent all its CPU in it.
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in db_cpu_seconds(db_pids).items())


async def bench_ours(
    args: argparse.Namespace,
    dsn: str,
    tmp: Path,
    sink: int,
    db_pids: Callable[[], list[int]] | None,
) -> Ours:
    n = args.messages
    port = free_port()
    env = mta_env(dsn, tmp, SUBMISSION_PORT=str(port), OUTBOUND_RELAY=f"127.0.0.1:{sink}")
    log = tmp / "mta.log"
    submission = start("submission", env, log, "submission listening")
    try:
        cpu, db = tree_cpu_seconds(submission.pid), db_cpu_seconds(db_pids)
        sampler = profile(args, "submission", [submission.pid])
        submit = await load(port, args, login=True)
        finish(sampler)
        submit_cpu = tree_cpu_seconds(submission.pid) - cpu
        submit_db = db_spent(db_pids, db)
    finally:
        stop(submission)
    workers = []
    for i in range(args.workers):
        # Each waits for its own line: the log is shared.
        worker_log = tmp / f"outbound-{i}.log"
        workers.append(start("outbound", env, worker_log, "worker running"))
    started = time.perf_counter()
    cpu, db = sum(tree_cpu_seconds(w.pid) for w in workers), db_cpu_seconds(db_pids)
    sampler = profile(args, "outbound", [w.pid for w in workers])
    try:
        progress = (0, time.monotonic())
        while (done := await delivered(dsn)) < n:
            if any(w.poll() is not None for w in workers):
                sys.exit("an outbound worker exited")
            if done > progress[0]:
                progress = (done, time.monotonic())
            elif time.monotonic() - progress[1] > 60:
                sys.exit(f"delivery stalled at {done} of {n}: see {tmp}/outbound-*.log")
            await asyncio.sleep(0.05)
        deliver = time.perf_counter() - started
        finish(sampler)
        # From "worker running" on (the signing processes' start-up included).
        deliver_cpu = sum(tree_cpu_seconds(w.pid) for w in workers) - cpu
        deliver_db = db_spent(db_pids, db)
    finally:
        for worker in workers:
            stop(worker)
    return Ours(
        submit,
        deliver,
        submit_cpu / n * 1000,
        None if submit_db is None else submit_db / n * 1000,
        deliver_cpu / n * 1000,
        None if deliver_db is None else deliver_db / n * 1000,
    )


def profile(args: argparse.Namespace, name: str, pids: list[int]) -> Sampler | None:
    """With --profile DIR: py-spy samples ``pids`` (and their children) into DIR/name."""
    if args.profile is None:
        return None
    args.profile.mkdir(parents=True, exist_ok=True)
    return Sampler(pids, args.profile / f"{name}.txt")


def finish(sampler: Sampler | None) -> None:
    """Stop the sampler and print where the samples were (inclusive and own share)."""
    if sampler is None:
        return
    sampler.stop()
    print(f"\n{sampler.path.name}: share of samples on the stack / at the top")
    for function, inclusive, own in top_functions(sampler.path):
        print(f"{inclusive:6.1%} {own:6.1%}  {function}")


def postfix_instance(base: Path, port: int, sink: int) -> Path:
    return postfix.start(
        base,
        port,
        [
            f"relayhost = [127.0.0.1]:{sink}",
            # Hold delivery while acceptance alone is measured.
            "defer_transports = smtp",
            # Postfix's defaults would slow a single destination down;
            # allow the same parallelism our worker uses.
            "default_destination_concurrency_limit = 20",
        ],
    )


async def bench_postfix(args: argparse.Namespace, tmp: Path, sink: int) -> tuple[float, float]:
    port = free_port()
    conf = await asyncio.to_thread(postfix_instance, tmp / "postfix", port, sink)
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            if time.monotonic() > deadline:
                sys.exit("postfix did not listen")
            await asyncio.sleep(0.05)
        submit = await load(port, args, login=False)
        deliver = await asyncio.to_thread(release_and_drain, conf)
    finally:
        await asyncio.to_thread(postfix.stop, conf)
    return submit, deliver


def release_and_drain(conf: Path) -> float:
    """Let Postfix deliver what it holds; the seconds until its queue is empty."""
    subprocess.run(["postconf", "-c", str(conf), "-e", "defer_transports ="], check=True)
    subprocess.run(["postfix", "-c", str(conf), "reload"], check=True, capture_output=True)
    started = time.perf_counter()
    subprocess.run(["postqueue", "-c", str(conf), "-f"], check=True)
    postfix.wait_empty(conf)
    return time.perf_counter() - started


def start_sink(port: int) -> subprocess.Popen[bytes]:
    """Postfix's smtp-sink on the loopback: accepts everything, keeps nothing."""
    user = ["-u", "nobody"] if os.geteuid() == 0 else []
    sink = subprocess.Popen(["smtp-sink", *user, f"127.0.0.1:{port}", "256"])
    wait_listening(port, sink)
    return sink


def report(args: argparse.Namespace, ours: Ours, theirs: tuple[float, float]) -> str:
    n = args.messages

    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    rows = [
        ("submission: accepted and queued durably", ours.submit, theirs[0], ours.submit_cpu,
         ours.submit_db_cpu),
        ("delivery to a loopback smtp-sink", ours.deliver, theirs[1], ours.deliver_cpu,
         ours.deliver_db_cpu),
    ]  # fmt: skip
    lines = [
        f"{n} messages of {args.size} bytes, {args.sessions} sessions, "
        f"{args.workers} outbound worker process(es), "
        f"{os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), "
        f"Python {platform.python_version()}; load average at the end "
        f"{os.getloadavg()[0]:.1f}.",
        "",
        "| | ours (messages/s) | Postfix 3.7 (messages/s) | ours / Postfix |"
        " our daemon CPU ms/message | PostgreSQL CPU ms/message |",
        "|---|---|---|---|---|---|",
    ]
    for name, mine, their, cpu, db in rows:
        lines.append(
            f"| {name} | {n / mine:,.0f} | {n / their:,.0f} | {their / mine:.2f} |"
            f" {cpu:.2f} | {ms(db)} |"
        )
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> None:
    ensure_postfix_tools()
    with tempfile.TemporaryDirectory(prefix="send-bench-") as name:
        tmp = Path(name)
        os.chmod(tmp, 0o755)  # Postfix's daemons (user postfix) walk into it
        sink_port = free_port()
        sink = await asyncio.to_thread(start_sink, sink_port)
        try:
            async with database(args.database_url, tmp, "send_bench") as (dsn, pg):
                await prepare(dsn)
                db_pids = postgres_pids(pg.pgdata) if pg is not None else None
                ours = await bench_ours(args, dsn, tmp, sink_port, db_pids)
            theirs = await bench_postfix(args, tmp, sink_port)
        finally:
            sink.terminate()
            sink.wait()
    body = report(args, ours, theirs)
    print(body)
    if args.write_docs:
        intro = (__doc__ or "").split("\n\n", 2)[2].rsplit("\n\n", 1)[0]
        replace_section(SECTION, f"What `benchmarks/submission.py` measures:\n\n{intro}\n\n{body}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--size", type=int, default=10240)
    parser.add_argument("--workers", type=int, default=1, help="python -m mta outbound processes")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument(
        "--profile", type=Path, default=None, help="py-spy each daemon's phase into this directory"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
