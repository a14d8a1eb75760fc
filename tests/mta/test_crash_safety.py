"""SIGKILL the real daemon process mid-stream: every 250 is stored, nothing else is.

``python -m mta smtp`` runs as a subprocess against the test database. A
sender thread sends a stream of messages (some to an unknown recipient, which
must be refused) while the test kills the daemon with SIGKILL; the daemon is
started again and more mail is sent. Afterwards every message answered 250 is
in the store with its blob readable, no refused message is, and only a
message whose reply was lost with the connection may go either way.
"""

from __future__ import annotations

import asyncio
import os
import signal
import smtplib
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from common.runtime import Runtime
from mta.context import MtaContext
from tests.conftest import ROOT, TEST_SECRET, free_port
from tests.mta import factories
from tests.mta.dnsserver import LoopbackDNS


def start_daemon(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mta", "smtp"], cwd=ROOT, env=env, stdout=out, stderr=out
        )
    port = int(env["SMTP_PORT"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"daemon exited: {log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"daemon did not listen: {log.read_text()}")


def daemon_env(runtime: Runtime, dns: LoopbackDNS, port: int, **extra: str) -> dict[str, str]:
    """The environment of a ``python -m mta smtp`` on ``port`` against the test's database."""
    env = {k: v for k, v in os.environ.items() if k not in ("APP_ENV", "NODE_ENV", "DATABASE_URL")}
    env.update(
        {
            "DATABASE_URL": str(runtime.settings.database_url),
            "DATA_DIR": str(runtime.settings.data_dir),  # the same blob store the test reads
            "SECRET": TEST_SECRET,
            "APP_ENV": "test",
            "SMTP_HOST": "127.0.0.1",
            "SMTP_PORT": str(port),
            "SMTP_HOSTNAME": "mx.test",
            "DNS_RESOLVERS": dns.address,
            **extra,
        }
    )
    return env


def send_one(port: int, subject: str, rcpt: str) -> str:
    """'250', 'refused' (a definite non-250 answer) or 'lost' (no answer: connection died)."""
    raw = (
        f"From: bob@sender.test\r\nTo: {rcpt}\r\nSubject: {subject}\r\n"
        f"Message-ID: <{subject}@sender.test>\r\n\r\nbody of {subject}\r\n"
    ).encode()
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
            client.ehlo("client.test")
            client.mail("bob@sender.test")
            code, _ = client.rcpt(rcpt)
            if code != 250:
                return "refused"
            code, _ = client.data(raw)
            return "250" if code == 250 else "refused"
    except (smtplib.SMTPServerDisconnected, ConnectionError, OSError):
        return "lost"


async def test_sigkill_between_and_during_messages_loses_nothing_answered_250(
    runtime: Runtime, mta_ctx: MtaContext, dns_server: LoopbackDNS, tmp_path: Path
) -> None:
    owner = await factories.mailbox_owner(runtime.db, "alice@example.test")
    port = free_port()
    env = daemon_env(runtime, dns_server, port, DB_POOL_SIZE="4")
    log = tmp_path / "mta.log"
    outcomes: dict[str, str] = {}
    in_full_flow = threading.Event()

    def stream(prefix: str, count: int) -> None:
        for i in range(count):
            rcpt = "nobody@example.test" if i % 4 == 3 else "alice@example.test"
            subject = f"{prefix}-{i}"
            outcomes[subject] = send_one(port, subject, rcpt)
            if i + 1 == 8:
                in_full_flow.set()

    proc = start_daemon(env, log)
    try:
        stream("before", 6)  # killed between messages after these
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc = start_daemon(env, log)
        sender = threading.Thread(target=stream, args=("during", 60))
        sender.start()
        # Kill while the stream is in full flow.
        assert await asyncio.to_thread(in_full_flow.wait, 60)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        sender.join(timeout=60)
        proc = start_daemon(env, log)
        stream("after", 4)
    finally:
        proc.kill()
        proc.wait()

    rows = await runtime.db.fetch_all(
        "SELECT subject, blob_id FROM mta.emails WHERE address_id = %s", (owner["address_id"],)
    )
    stored = {r["subject"]: r["blob_id"] for r in rows}
    answered = {s for s, o in outcomes.items() if o == "250"}
    refused = {s for s, o in outcomes.items() if o == "refused"}
    lost = {s for s, o in outcomes.items() if o == "lost"}
    assert answered and refused and lost  # the run really covered all three cases
    assert answered <= set(stored), f"answered 250 but missing: {answered - set(stored)}"
    assert not (refused & set(stored))
    assert set(stored) <= answered | lost
    # At most the one message in flight when the daemon died can be stored without its 250.
    assert len(set(stored) - answered) <= 1
    assert len(stored) == len(rows)  # no message stored twice
    for subject in answered:
        raw = await mta_ctx.blobs.get(stored[subject])
        assert f"body of {subject}".encode() in raw
    assert {s for s in answered if s.startswith("after")} == {"after-0", "after-1", "after-2"}
