"""The IMAP, POP3 and ManageSieve daemons' memory under idle and endless connections.

    .venv/bin/python benchmarks/access_soak.py [--idle 1000] [--dribblers 200]
        [--appenders 20] [--seconds 30] [--database-url postgresql://...]

``python -m mta imap``, ``python -m mta pop3`` and ``python -m mta
managesieve`` run against an embedded PostgreSQL (or --database-url) on
loopback. The script opens ``--idle`` connections to each that read the
greeting and then say nothing, and ``--dribblers`` to each that send a
command line one byte every 0.1 s and never end it (IMAP: ``a LOGIN
"aaaa...``; POP3: ``USER aaaa...``; ManageSieve: a quoted string). IMAP also
gets ``--appenders`` signed-in connections that each announce an APPEND
literal of 8 MiB (LITERAL+), send all of it but the last byte and wait: what
a slow upload of a large message costs while it arrives. Meanwhile a
legitimate client signs in every 2 seconds (imaplib over IMAPS, SELECT;
poplib over POP3S, STAT; a ManageSieve STARTTLS, AUTHENTICATE, LISTSCRIPTS)
and must succeed. Each
daemon's RSS (VmRSS) is sampled every second: before, at its peak, at the end
and once every connection is closed. Bounded: the run stops after
``--seconds`` and closes every socket. Not part of the test suite
(tests/mta/test_pop3.py and test_managesieve.py are its fast versions).

All connections come from 127.0.0.1, so the per-client cap is raised to the
per-process one (MAIL_ACCESS_MAX_CONNECTIONS_PER_IP): the point is what a
connection costs, not that the 21st from one address is refused.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import imaplib
import poplib
import ssl
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.processes import free_port  # noqa: E402
from benchmarks.smtp_inbound import daemon_env, database, prepare, wait_listening  # noqa: E402
from benchmarks.smtp_soak import rss_mib  # noqa: E402

PASSWORD = "correct horse battery staple"
EMAIL = "alice@bench.test"
LEGIT_EVERY = 2.0
APPEND_SIZE = 8 * 1024 * 1024
DAEMONS = ("imap", "pop3", "managesieve")


def client_tls() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


async def set_password(dsn: str) -> None:
    from common.db import Database
    from common.passwords import hash_password

    db = await Database.connect(dsn, size=1)
    try:
        await db.execute(
            "UPDATE mail.addresses SET password_hash = %s", (await hash_password(PASSWORD),)
        )
    finally:
        await db.close()


def start(daemon: str, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "mta", daemon], cwd=ROOT, env=env, stdout=out, stderr=out
        )


async def hold(port: int, line: bytes | None, stop: asyncio.Event, counts: Counter[str]) -> None:
    """Idle (``line`` None) or dribbling ``line`` a byte at a time, until stopped or closed."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        counts["connect failed"] += 1
        return
    try:
        counts["opened"] += 1
        closed = asyncio.ensure_future(reader.read())
        at = 0
        while not stop.is_set() and not closed.done():
            if line is not None:
                writer.write(line[at % len(line) : at % len(line) + 1])
                at += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(closed), 0.1)
        if closed.done():
            counts["closed by the server"] += 1
        closed.cancel()
    except (ConnectionError, OSError):
        counts["reset"] += 1
    finally:
        writer.close()


async def append_and_stall(port: int, stop: asyncio.Event, counts: Counter[str]) -> None:
    """Sign in, then an APPEND whose literal arrives all but its last byte."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client_tls())
    except OSError:
        counts["append connect failed"] += 1
        return
    try:
        await reader.readline()
        writer.write(f'a LOGIN "{EMAIL}" "{PASSWORD}"\r\n'.encode())
        while not (line := await reader.readline()).startswith(b"a "):
            pass
        if not line.startswith(b"a OK"):
            counts["append login refused"] += 1
            return
        writer.write(b"b APPEND INBOX {%d+}\r\n" % APPEND_SIZE)
        chunk = b"Subject: big\r\n\r\n" + b"x" * (64 * 1024 - 17)
        for start in range(0, APPEND_SIZE - 1, len(chunk)):
            writer.write(chunk[: APPEND_SIZE - 1 - start])
            await writer.drain()
        counts["appends stalled"] += 1
        await stop.wait()
    except (ConnectionError, OSError):
        counts["append reset"] += 1
    finally:
        writer.close()


def imap_legit(port: int) -> bool:
    client = imaplib.IMAP4_SSL("127.0.0.1", port, ssl_context=client_tls(), timeout=30)
    try:
        client.login(EMAIL, PASSWORD)
        return client.select("INBOX")[0] == "OK"
    finally:
        client.logout()


def pop3_legit(port: int) -> bool:
    client = poplib.POP3_SSL("127.0.0.1", port, timeout=30, context=client_tls())
    try:
        client.user(EMAIL)
        client.pass_(PASSWORD)
        client.stat()
        return True
    finally:
        client.quit()


async def sieve_legit(port: int) -> bool:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def response() -> bytes:
        while True:
            line = await asyncio.wait_for(reader.readline(), 30)
            if not line or line[:2] in (b"OK", b"NO", b"BY"):
                return line

    try:
        await response()
        writer.write(b"STARTTLS\r\n")
        await response()
        await writer.start_tls(client_tls())
        await response()
        token = base64.b64encode(f"\0{EMAIL}\0{PASSWORD}".encode())
        writer.write(b'AUTHENTICATE "PLAIN" "' + token + b'"\r\n')
        ok = (await response()).startswith(b"OK")
        writer.write(b"LISTSCRIPTS\r\n")
        return ok and (await response()).startswith(b"OK")
    finally:
        writer.close()


async def soak(args: argparse.Namespace, dsn: str, data_dir: Path) -> dict[str, object]:
    imap, imaps = free_port(), free_port()
    pop3, pop3s, sieve = free_port(), free_port(), free_port()
    cap = str(args.idle + args.dribblers + args.appenders + 50)
    env = daemon_env(
        dsn,
        data_dir,
        free_port(),
        "127.0.0.1",
        IMAP_PORT=str(imap),
        IMAPS_PORT=str(imaps),
        POP3_PORT=str(pop3),
        POP3S_PORT=str(pop3s),
        SIEVE_PORT=str(sieve),
        IMAP_MAX_CONNECTIONS=cap,
        IMAP_MAX_CONNECTIONS_PER_IP=cap,
        MAIL_ACCESS_MAX_CONNECTIONS=cap,
        MAIL_ACCESS_MAX_CONNECTIONS_PER_IP=cap,
        SUBMISSION_AUTH_FAILURES="1000",
    )
    procs = {name: start(name, env, data_dir / f"{name}.log") for name in DAEMONS}
    samples: dict[str, list[float]] = {name: [] for name in procs}
    counts: Counter[str] = Counter()
    legit = Counter[str]()
    try:
        await asyncio.to_thread(wait_listening, imaps, procs["imap"])
        await asyncio.to_thread(wait_listening, pop3s, procs["pop3"])
        await asyncio.to_thread(wait_listening, sieve, procs["managesieve"])
        before = {name: rss_mib(p.pid) for name, p in procs.items()}
        stop = asyncio.Event()
        holders = []
        for port, line in (
            (imap, b'a LOGIN "' + b"a" * 100_000),
            (pop3, b"USER " + b"a" * 100_000),
            (sieve, b'"' + b"a" * 100_000),
        ):
            holders += [
                asyncio.create_task(hold(port, None, stop, counts)) for _ in range(args.idle)
            ]
            holders += [
                asyncio.create_task(hold(port, line, stop, counts)) for _ in range(args.dribblers)
            ]
        holders += [
            asyncio.create_task(append_and_stall(imaps, stop, counts))
            for _ in range(args.appenders)
        ]
        started = time.monotonic()
        next_legit = started
        while time.monotonic() - started < args.seconds:
            for name, p in procs.items():
                samples[name].append(rss_mib(p.pid))
            if time.monotonic() >= next_legit:
                next_legit += LEGIT_EVERY
                try:
                    legit[
                        "imap ok" if await asyncio.to_thread(imap_legit, imaps) else "imap no"
                    ] += 1
                except Exception:
                    legit["imap failed"] += 1
                try:
                    legit[
                        "pop3 ok" if await asyncio.to_thread(pop3_legit, pop3s) else "pop3 no"
                    ] += 1
                except Exception:
                    legit["pop3 failed"] += 1
                try:
                    legit["sieve ok" if await sieve_legit(sieve) else "sieve no"] += 1
                except Exception:
                    legit["sieve failed"] += 1
            await asyncio.sleep(1.0)
        at_end = {name: rss_mib(p.pid) for name, p in procs.items()}
        stop.set()
        await asyncio.gather(*holders)
        await asyncio.sleep(2.0)  # the daemons notice the closes
        after = {name: rss_mib(p.pid) for name, p in procs.items()}
    finally:
        for p in procs.values():
            p.terminate()
            p.wait(10)
    return {
        "before": before,
        "peak": {name: max(s) for name, s in samples.items()},
        "at_end": at_end,
        "after": after,
        "connections": dict(counts),
        "legit": dict(legit),
    }


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="access-soak-") as tmp:
        async with database(args.database_url, Path(tmp), "access_soak") as (dsn, _pg):
            await prepare(dsn)
            await set_password(dsn)
            result = await soak(args, dsn, Path(tmp))
    print(
        f"{args.idle} idle and {args.dribblers} dribbling connections per daemon,"
        f" {args.appenders} stalled {APPEND_SIZE >> 20} MiB APPENDs to IMAP, {args.seconds} s"
    )
    print("| daemon | before | peak | at the end | after every connection closed |")
    print("|---|---|---|---|---|")
    for name in DAEMONS:
        row = [result[k][name] for k in ("before", "peak", "at_end", "after")]  # type: ignore[index]
        print(f"| {name} | " + " | ".join(f"{v:.1f} MiB" for v in row) + " |")
    print("connections:", result["connections"])
    print("legitimate sign-ins:", result["legit"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--dribblers", type=int, default=200)
    parser.add_argument("--appenders", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--database-url", default=None)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
