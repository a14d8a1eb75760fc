"""The queue in real processes: the gateway submits and delivers; a killed worker loses nothing."""

from __future__ import annotations

import asyncio
import signal
import smtplib
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session

from common.runtime import Runtime
from mta import mailstore
from tests.conftest import ROOT, free_port
from tests.mta import sending
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.test_crash_safety import daemon_env
from tests.mta.test_submission import client_tls, message


async def test_the_gateway_submits_and_delivers_at_once(
    runtime: Runtime, gateway_process: Callable[..., Any], dns_server: LoopbackDNS
) -> None:
    alice = await sending.hosted_sender(runtime.db)
    async with sending.receiver() as (handler, port):
        sending.mx(dns_server, "remote.test")
        submission_port = free_port()
        gateway = await asyncio.to_thread(
            gateway_process,
            env={
                "DATABASE_URL": str(runtime.settings.database_url),
                "DNS_RESOLVERS": dns_server.address,
                "SUBMISSION_PORT": str(submission_port),
                "OUTBOUND_SMTP_PORT": str(port),
                "OUTBOUND_MTA_STS": "false",
            },
        )

        def submit() -> dict[str, Any]:
            with smtplib.SMTP("127.0.0.1", submission_port, timeout=10) as client:
                client.starttls(context=client_tls())
                client.login(alice.email, alice.password)
                return client.send_message(message())

        assert await asyncio.to_thread(submit) == {}
        # Woken by the NOTIFY of the commit, not by a poll a minute later.
        [got] = await handler.wait_for(1, seconds=15)
        assert got.rcpts == ["bob@remote.test"]
        assert "submission listening" in gateway.log()


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mta", "outbound"], cwd=ROOT, env=env, stdout=out, stderr=out
        )
    deadline = time.monotonic() + 30
    while "worker running" not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"worker did not start: {log.read_text()}")
        time.sleep(0.05)
    return proc


async def test_a_worker_killed_mid_delivery_loses_nothing(
    runtime: Runtime, dns_server: LoopbackDNS, tmp_path: Path
) -> None:
    alice = await sending.hosted_sender(runtime.db)
    hold = asyncio.Event()
    in_data = asyncio.Event()
    accepted: list[bytes] = []

    class Handler:
        async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
            in_data.set()
            await hold.wait()
            if server.transport is None or server.transport.is_closing():
                return "451 4.3.0 the client is gone"  # never acknowledged: not delivered
            accepted.append(envelope.original_content or b"")
            return "250 2.0.0 accepted"

    loop = asyncio.get_running_loop()
    srv = await loop.create_server(lambda: SMTP(Handler(), loop=loop), "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    sending.mx(dns_server, "remote.test")
    # Real time: the worker runs in another process, on the wall clock.
    ids = []
    for n in range(5):
        message_id = str(uuid.uuid4())
        ids.append(message_id)
        async with runtime.db.transaction() as conn:
            await mailstore.enqueue(
                conn,
                message_id=message_id,
                account_id=alice.account_id,
                source="api",
                mail_from=alice.email,
                recipients=["bob@remote.test"],
                raw=f"From: alice@example.test\r\nSubject: {n}\r\n\r\nbody {n}\r\n".encode(),
                now=datetime.now(UTC),
            )
    env = daemon_env(
        runtime,
        dns_server,
        free_port(),
        OUTBOUND_SMTP_PORT=str(port),
        OUTBOUND_LEASE="2",
        OUTBOUND_MTA_STS="false",
    )
    log = tmp_path / "worker.log"
    try:
        worker = start_worker(env, log)
        await asyncio.wait_for(in_data.wait(), 20)
        worker.send_signal(signal.SIGKILL)
        await asyncio.to_thread(worker.wait, 10)
        # Let the loop read the dead connections' EOF (aiosmtpd then cancels their
        # handlers) before the held DATA answers are released.
        await asyncio.sleep(0.5)
        hold.set()
        await asyncio.sleep(0)
        assert accepted == []
        worker = start_worker(env, log)
        try:
            deadline = time.monotonic() + 30
            while True:
                async with runtime.db.connection() as conn:
                    states = await mailstore.outbound_statuses(conn, alice.account_id, ids)
                if set(states.values()) == {"delivered"} or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.2)
        finally:
            worker.send_signal(signal.SIGTERM)
            await asyncio.to_thread(worker.wait, 10)
    finally:
        srv.close()
    assert states == dict.fromkeys(ids, "delivered"), log.read_text()
    bodies = sorted(raw.split(b"\r\n\r\n", 1)[1] for raw in accepted if isinstance(raw, bytes))
    assert bodies == [f"body {n}\r\n".encode() for n in range(5)]
