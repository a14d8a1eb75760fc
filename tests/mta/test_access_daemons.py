"""POP3 and ManageSieve as the gateway starts them, and each alone (``python -m mta pop3``,
``python -m mta managesieve``), against the test's database."""

from __future__ import annotations

import asyncio
import poplib
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common.runtime import Runtime
from tests.conftest import ROOT, free_port
from tests.mta import sending
from tests.mta.access import client_tls
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.test_crash_safety import daemon_env


def greeting(port: int) -> bytes:
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                return sock.recv(4096)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def pop3_stat(port: int, email: str, password: str) -> tuple[int, int]:
    client = poplib.POP3("127.0.0.1", port, timeout=10)
    client.stls(context=client_tls())
    client.user(email)
    client.pass_(password)
    found = client.stat()
    client.quit()
    return found


async def test_the_gateway_serves_pop3_and_managesieve_on_their_ports(
    runtime: Runtime, gateway_process: Callable[..., Any], dns_server: LoopbackDNS
) -> None:
    pop3, sieve = free_port(), free_port()
    alice = await sending.hosted_sender(runtime.db)
    gateway = await asyncio.to_thread(
        gateway_process,
        env={
            "DATABASE_URL": str(runtime.settings.database_url),
            "DNS_RESOLVERS": dns_server.address,
            "POP3_PORT": str(pop3),
            "SIEVE_PORT": str(sieve),
        },
    )
    assert await asyncio.to_thread(greeting, pop3) == b"+OK POP3 server ready\r\n"
    assert b'"IMPLEMENTATION" "mta"' in await asyncio.to_thread(greeting, sieve)
    try:
        assert await asyncio.to_thread(pop3_stat, pop3, alice.email, alice.password) == (0, 0)
    except Exception:
        print(gateway.log())
        raise
    # The ports a fixed listener has are the ones clients are told.
    url = f"{gateway.base_url}/mail/config-v1.1.xml?emailaddress={alice.email}"
    config = await asyncio.to_thread(_read, url)
    assert f"<port>{pop3}</port>" in config


def _read(url: str) -> str:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def test_python_m_mta_pop3_and_managesieve_run_alone(
    runtime: Runtime, dns_server: LoopbackDNS, tmp_path: Path
) -> None:
    pop3, sieve = free_port(), free_port()
    env = daemon_env(
        runtime,
        dns_server,
        free_port(),
        POP3_PORT=str(pop3),
        POP3S_PORT="off",
        SIEVE_PORT=str(sieve),
    )
    procs = []
    for daemon in ("pop3", "managesieve"):
        log = tmp_path / f"{daemon}.log"
        with open(log, "ab") as out:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "mta", daemon], cwd=ROOT, env=env, stdout=out, stderr=out
                )
            )
    try:
        assert greeting(pop3) == b"+OK POP3 server ready\r\n"
        assert b'"SASL" ""' in greeting(sieve)
        assert f"mta pop3 listening on ports {pop3}" in (tmp_path / "pop3.log").read_text()
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)
