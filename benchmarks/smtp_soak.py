"""The SMTP daemon's memory under slow and idle connections, while legitimate mail flows.

    .venv/bin/python benchmarks/smtp_soak.py [--dribblers 200] [--idle 200]
        [--burst 1048576] [--seconds 60] [--database-url postgresql://...]

``python -m mta smtp`` runs against an embedded PostgreSQL (or --database-url)
on loopback. The script opens ``--idle`` connections that read the greeting and
then say nothing, and ``--dribblers`` that go through EHLO, MAIL, RCPT, DATA,
send ``--burst`` bytes of message at once and then one byte a second, never
the final dot. Meanwhile one legitimate message every 2 seconds must be
answered 250. The daemon's RSS (VmRSS from /proc) is sampled each second;
the report gives it before the connections, at its peak, at the end and once
every connection is closed. Everything is bounded: the run stops after
``--seconds`` of dribbling and closes every socket. Not part of the test suite
(tests/mta/test_smtp_exhaustion.py is its fast version).

All connections come from 127.0.0.1, so the daemon runs with its per-client
limits raised (SMTP_MAX_CONNECTIONS_PER_IP, SMTP_MAX_CONNECTIONS): the point
here is what a connection costs, not that a second one from the same address
is refused.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import smtplib
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.processes import free_port  # noqa: E402
from benchmarks.smtp_inbound import (  # noqa: E402
    RCPT,
    count_stored,
    daemon_env,
    database,
    prepare,
    start_daemon,
    wait_listening,
)

LEGIT_EVERY = 2.0


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def reply(reader: asyncio.StreamReader) -> bytes:
    """One whole reply (the last line of a multi-line one)."""
    while True:
        line = await reader.readline()
        if not line or line[3:4] != b"-":
            return line


async def idle(port: int, stop: asyncio.Event, counts: Counter[str]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        if (await reply(reader)).startswith(b"220"):
            counts["idle greeted"] += 1
        closed = asyncio.ensure_future(reader.read())  # ends when the server closes
        stopping = asyncio.ensure_future(stop.wait())
        done, _ = await asyncio.wait({closed, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if closed in done:
            counts["idle closed by the server"] += 1
        for task in (closed, stopping):
            task.cancel()
    finally:
        writer.close()


async def dribble(port: int, burst: int, stop: asyncio.Event, counts: Counter[str]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        await reply(reader)
        for command in (b"EHLO dribbler.test", b"MAIL FROM:<d@sender.test>", f"RCPT TO:<{RCPT}>"):
            writer.write((command if isinstance(command, bytes) else command.encode()) + b"\r\n")
            await reply(reader)
        writer.write(b"DATA\r\n")
        if not (await reply(reader)).startswith(b"354"):
            return
        counts["dribblers in DATA"] += 1
        line = b"x" * 76 + b"\r\n"
        writer.write(b"Subject: slow\r\n\r\n" + line * (burst // len(line)))
        await writer.drain()
        while not stop.is_set():
            writer.write(b"y")
            await writer.drain()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
            if reader.at_eof():
                counts["dribblers closed by the server"] += 1
                return
    except (ConnectionError, OSError):
        counts["dribblers closed by the server"] += 1
    finally:
        writer.close()


def send_legit(port: int, n: int) -> int:
    message = (
        f"From: bob@sender.test\r\nTo: {RCPT}\r\nSubject: legit {n}\r\n"
        f"Message-ID: <legit-{n}@sender.test>\r\n\r\nstill accepted\r\n"
    ).encode()
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
            client.ehlo("legit.test")
            client.mail("bob@sender.test")
            client.rcpt(RCPT)
            code, _ = client.data(message)
            return code
    except (smtplib.SMTPException, OSError):
        return 0


async def soak(args: argparse.Namespace, dsn: str, data_dir: Path) -> None:
    from tests.mta.dnsserver import LoopbackDNS

    address_id = await prepare(dsn)
    dns = LoopbackDNS().start()
    port = free_port()
    cap = str(args.idle + args.dribblers + 50)
    limits = {"SMTP_MAX_CONNECTIONS": cap, "SMTP_MAX_CONNECTIONS_PER_IP": cap}
    if args.data_timeout:
        limits["SMTP_DATA_TIMEOUT"] = str(args.data_timeout)
    if args.timeout:
        limits["SMTP_TIMEOUT"] = str(args.timeout)
    env = daemon_env(dsn, data_dir, port, dns.address, DB_POOL_SIZE="5", **limits)
    daemon = await asyncio.to_thread(start_daemon, env, data_dir / "mta.log")
    stop = asyncio.Event()
    counts: Counter[str] = Counter()
    codes: list[int] = []
    try:
        await asyncio.to_thread(wait_listening, port, daemon)
        codes.append(await asyncio.to_thread(send_legit, port, 0))  # warm up
        before = rss_mib(daemon.pid)
        # Opened in small groups, as a real flood arrives over seconds: 400 SYNs at
        # once overflow the listen backlog and measure the kernel, not the daemon.
        tasks = []
        for n in range(max(args.idle, args.dribblers)):
            if n < args.idle:
                tasks.append(asyncio.create_task(idle(port, stop, counts)))
            if n < args.dribblers:
                tasks.append(asyncio.create_task(dribble(port, args.burst, stop, counts)))
            if n % 20 == 19:
                await asyncio.sleep(0.2)
        samples = []
        started = time.monotonic()
        next_legit = started
        while time.monotonic() - started < args.seconds:
            if time.monotonic() >= next_legit:
                codes.append(await asyncio.to_thread(send_legit, port, len(codes)))
                next_legit += LEGIT_EVERY
            samples.append(rss_mib(daemon.pid))
            print(
                f"{time.monotonic() - started:5.1f} s: RSS {samples[-1]:.1f} MiB,"
                f" last legit reply {codes[-1]}, {dict(counts)}",
                file=sys.stderr,
            )
            await asyncio.sleep(1.0)
        during = samples[-1]
        stop.set()
        # A connection still waiting for its greeting or a reply is given up on.
        _done, pending = await asyncio.wait(tasks, timeout=5)
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(2.0)
        after = rss_mib(daemon.pid)
        codes.append(await asyncio.to_thread(send_legit, port, len(codes)))
    finally:
        stop.set()
        daemon.terminate()
        daemon.wait()
        dns.stop()
    stored = await count_stored(dsn, address_id)
    accepted = sum(1 for c in codes if c == 250)
    limits = f", SMTP_DATA_TIMEOUT={args.data_timeout}" if args.data_timeout else ""
    limits += f", SMTP_TIMEOUT={args.timeout}" if args.timeout else ""
    print(
        f"{args.dribblers} dribblers (burst {args.burst} bytes, then 1 byte/s) + {args.idle} idle"
        f" connections for {args.seconds} s on loopback{limits}:\n"
        f"  daemon RSS: {before:.1f} MiB before, peak {max(samples):.1f} MiB, {during:.1f} MiB at"
        f" the end, {after:.1f} MiB after every connection closed\n"
        f"  connections: {dict(counts)}\n"
        f"  legitimate messages: {accepted} of {len(codes)} answered 250, {stored} stored"
    )


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="smtp-soak-") as tmp:
        async with database(args.database_url, Path(tmp), "smtp_soak") as (dsn, _pg):
            await soak(args, dsn, Path(tmp))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dribblers", type=int, default=200)
    parser.add_argument("--idle", type=int, default=200)
    parser.add_argument("--burst", type=int, default=1024 * 1024, help="bytes sent at once")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument(
        "--data-timeout", type=int, default=0, help="SMTP_DATA_TIMEOUT (default: the daemon's)"
    )
    parser.add_argument("--timeout", type=int, default=0, help="SMTP_TIMEOUT (idem)")
    parser.add_argument("--database-url", default=None)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
