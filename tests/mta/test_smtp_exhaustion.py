"""Slow and idle connections against the real daemon process: its memory stays flat, mail flows.

The fast version of benchmarks/smtp_soak.py: ``python -m mta smtp`` as a
subprocess on a real port, 20 connections that send 1 MiB of DATA at once and
then a byte at a time without ever ending it, 20 that say nothing after the
greeting, and legitimate mail meanwhile. Before the spool, each of the 20 held
its megabyte in the daemon's memory (and the memory stayed after they left).
"""

from __future__ import annotations

import asyncio
import contextlib
import smtplib
from pathlib import Path
from typing import Any

from common.db import Database
from common.runtime import Runtime
from mta.context import MtaContext
from tests.conftest import free_port
from tests.mta import factories
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.test_crash_safety import daemon_env, start_daemon
from tests.mta.test_smtp_protocol_daemon import body_of, stored
from tests.mta.test_smtp_protocol_data import Client

RCPT = "alice@example.test"
BURST = 1024 * 1024
CONNECTIONS = 20


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def send_legit(port: int, subject: str) -> int:
    message = f"From: bob@sender.test\r\nTo: {RCPT}\r\nSubject: {subject}\r\n\r\nhello\r\n"
    with smtplib.SMTP("127.0.0.1", port, timeout=20) as client:
        client.ehlo("legit.test")
        client.mail("bob@sender.test")
        client.rcpt(RCPT)
        code, _ = client.data(message.encode())
        return code


async def dribbler(port: int, stop: asyncio.Event) -> None:
    client = await Client.connect(port)
    try:
        await client.send(b"EHLO slow.test\r\nMAIL FROM:<d@sender.test>\r\n")
        await client.send(f"RCPT TO:<{RCPT}>\r\nDATA\r\n".encode())
        assert (await client.replies(4))[-1].startswith(b"354")
        line = b"z" * 78 + b"\r\n"
        await client.send(b"Subject: never ends\r\n\r\n" + line * (BURST // len(line)))
        while not stop.is_set():
            await client.send(b"y")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.5)
    finally:
        client.close()


async def idler(port: int, stop: asyncio.Event) -> None:
    client = await Client.connect(port)  # read the greeting, then nothing
    try:
        await stop.wait()
    finally:
        client.close()


async def test_memory_stays_flat_under_dribbling_and_idle_connections_and_mail_flows(
    runtime: Runtime, dns_server: LoopbackDNS, tmp_path: Path
) -> None:
    owner = await factories.mailbox_owner(runtime.db, RCPT)
    port = free_port()
    # Every client here is 127.0.0.1: the cap per address is not what is measured.
    env = daemon_env(runtime, dns_server, port, DB_POOL_SIZE="2", SMTP_MAX_CONNECTIONS_PER_IP="100")
    proc = await asyncio.to_thread(start_daemon, env, tmp_path / "mta.log")
    stop = asyncio.Event()
    tasks: list[asyncio.Task[Any]] = []
    try:
        assert await asyncio.to_thread(send_legit, port, "warm-up") == 250
        before = rss_mib(proc.pid)
        tasks = [asyncio.create_task(idler(port, stop)) for _ in range(CONNECTIONS)]
        tasks += [asyncio.create_task(dribbler(port, stop)) for _ in range(CONNECTIONS)]
        await asyncio.sleep(2)  # every burst sent and read, dribbling going on
        assert not any(t.done() for t in tasks), [t.exception() for t in tasks if t.done()]
        during = await asyncio.to_thread(send_legit, port, "during")
        held = rss_mib(proc.pid)
        stop.set()
        await asyncio.gather(*tasks)
        after = await asyncio.to_thread(send_legit, port, "after")
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        proc.terminate()
        proc.wait()
    assert (during, after) == (250, 250)
    # 20 MiB of unfinished data arrived; what the daemon keeps of it is bounded
    # by 64 KiB a connection (the rest is in the spool files).
    assert held - before < 8, (before, held)
    rows = await runtime.db.fetch_all(
        "SELECT subject FROM mta.emails WHERE address_id = %s ORDER BY subject",
        (owner["address_id"],),
    )
    assert [r["subject"] for r in rows] == ["after", "during", "warm-up"]


async def test_a_message_larger_than_the_memory_part_is_stored_byte_for_byte(
    db: Database, mta_ctx: MtaContext, smtp_port: int
) -> None:
    owner = await factories.mailbox_owner(db, RCPT)
    # Dot-stuffed lines all through, so some fall on the boundaries of what was
    # spooled; 150 KB, under the test daemon's 200 KB limit.
    lines = [(b"." if n % 7 == 0 else b"") + b"%06d " % n + b"w" * 60 for n in range(2200)]
    body = b"\r\n".join(lines) + b"\r\n"
    stuffed = b"\r\n".join(b"." + ln if ln.startswith(b".") else ln for ln in lines) + b"\r\n"
    client = await Client.connect(smtp_port)
    await client.send(b"EHLO c.test\r\nMAIL FROM:<b@sender.test>\r\n")
    await client.send(f"RCPT TO:<{RCPT}>\r\nDATA\r\n".encode())
    assert (await client.replies(4))[-1].startswith(b"354")
    data = b"Subject: big\r\n\r\n" + stuffed + b".\r\n"
    await client.send(*[data[i : i + 30000] for i in range(0, len(data), 30000)], pause=0.01)
    [reply] = await client.replies(1)
    client.close()
    assert reply.startswith(b"250 2.0.0 OK: stored as")
    assert [body_of(raw) for raw in await stored(db, mta_ctx, owner)] == [body]
