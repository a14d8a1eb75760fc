"""The test harness.

One PostgreSQL per run (embedded, or TEST_DATABASE_URL), a template database
with every package's migrations applied once, and a fresh clone of it for
each test, so tests are isolated and cheap (a clone takes a few ms).

Fixtures:
  database_url     a fresh migrated database for this test
  module_database_url  one for a module whose tests share it (each its own rows)
  empty_database_url  a fresh database with nothing in it (migration tests)
  clock            a ManualClock the runtime reads; tests move it
  settings         test Settings (workers off; tests run jobs by hand)
  runtime          Runtime over the fresh database
  gateway_client   aiohttp test client over the whole gateway
  service_client   factory: await service_client("content") serves one service at the root
  gateway_process  factory: starts the real `python -m gateway` on a free port
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg2
import psycopg2.extensions
import pytest
from psycopg2 import sql

from common.clock import ManualClock
from common.db import Database
from common.embedded_pg import EmbeddedPostgres
from common.jobs import JobQueue
from common.migrations import migrate
from common.passwords import TEST_COST_ENV, use_test_cost
from common.runtime import Runtime
from common.settings import Settings
from gateway.app import build_app
from gateway.main import all_migrations

ROOT = Path(__file__).resolve().parent.parent
TEST_SECRET = "test-secret-" + "x" * 40

logging.getLogger("pgserver").setLevel(logging.WARNING)

# Small argon2 parameters in this process and in each gateway it starts (they
# inherit the variable): a full-cost hash or check is a second of CPU, and the
# suite makes hundreds. tests/common/test_crypto.py holds the production ones.
use_test_cost()
os.environ[TEST_COST_ENV] = "test"


def _with_db(dsn: str, name: str) -> str:
    return psycopg2.extensions.make_dsn(dsn, dbname=name)


def _admin(dsn: str) -> Any:
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    return conn


@pytest.fixture(scope="session")
def pg_admin_dsn() -> Iterator[str]:
    external = os.environ.get("TEST_DATABASE_URL")
    if external:
        yield external
        return
    # Not under pytest's basetemp: pytest prunes old basetemps when another
    # run starts, which would delete a running server's data directory.
    home = Path(tempfile.mkdtemp(prefix="svc-test-pg-"))
    pg = EmbeddedPostgres(home / "pgdata", delete_on_stop=True)
    pg.start()
    # A throw-away cluster needs no durability: without fsync, creating and
    # dropping a database per test costs a fraction of what it does otherwise.
    conn = _admin(pg.dsn("postgres"))
    with conn.cursor() as cur:
        for setting in ("fsync", "synchronous_commit", "full_page_writes"):
            cur.execute(f"ALTER SYSTEM SET {setting} = off")
        cur.execute("SELECT pg_reload_conf()")
    conn.close()
    try:
        yield pg.dsn("postgres")
    finally:
        pg.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def template_db(pg_admin_dsn: str) -> Iterator[str]:
    name = f"svc_template_{os.getpid()}"
    conn = _admin(pg_admin_dsn)
    with conn.cursor() as cur:
        cur.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        cur.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))

    async def prepare() -> None:
        db = await Database.connect(_with_db(pg_admin_dsn, name), size=1)
        try:
            await migrate(db, all_migrations())
        finally:
            await db.close()

    asyncio.run(prepare())
    try:
        yield name
    finally:
        with conn.cursor() as cur:
            cur.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
        conn.close()


def _fresh_database(admin_dsn: str, template: str) -> Iterator[str]:
    name = f"t_{secrets.token_hex(6)}"
    conn = _admin(admin_dsn)
    with conn.cursor() as cur:
        cur.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(template)
            )
        )
    try:
        yield _with_db(admin_dsn, name)
    finally:
        with conn.cursor() as cur:
            cur.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
        conn.close()


@pytest.fixture
def database_url(pg_admin_dsn: str, template_db: str) -> Iterator[str]:
    yield from _fresh_database(pg_admin_dsn, template_db)


@pytest.fixture(scope="module")
def module_database_url(pg_admin_dsn: str, template_db: str) -> Iterator[str]:
    """One migrated database for a whole module (tests/mta/imap/shared.py)."""
    yield from _fresh_database(pg_admin_dsn, template_db)


@pytest.fixture
def empty_database_url(pg_admin_dsn: str) -> Iterator[str]:
    yield from _fresh_database(pg_admin_dsn, "template0")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def harness_settings(database_url: str, data_dir: Path) -> Settings:
    return Settings(
        port=0,
        public_url="http://localhost:4300",
        database_url=database_url,
        secret=TEST_SECRET,
        app_env="test",
        data_dir=data_dir,
        run_workers=False,
    )


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return harness_settings(database_url, tmp_path / "var")


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = await Database.connect(database_url, size=5)
    try:
        yield database
    finally:
        await database.close()


@pytest.fixture
def runtime(settings: Settings, db: Database, clock: ManualClock) -> Runtime:
    return Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock))


@pytest.fixture
async def gateway_client(runtime: Runtime, aiohttp_client: Any) -> Any:
    return await aiohttp_client(build_app(runtime))


@pytest.fixture
def service_client(runtime: Runtime, aiohttp_client: Any) -> Callable[[str], Any]:
    async def make(name: str) -> Any:
        return await aiohttp_client(build_app(runtime, only=name))

    return make


# --- the real process ------------------------------------------------------


# Ports the harness hands out come from below the kernel's ephemeral range
# (Linux: 32768-60999), where a daemon binding port 0 never lands: a port
# picked here, released, then bound by the gateway cannot be taken meanwhile
# by the same process's SMTP daemon asking for "any free port".
HARNESS_PORTS = range(20000, 32000)


def _worker_ports() -> range:
    """This xdist worker's own slice of HARNESS_PORTS.

    A port is free when checked and bound by the gateway a second later; two
    workers that picked the same port in that window ended with one gateway
    failing to bind while its health check was answered by the other worker's
    gateway (a CI run saw sign-ups answered 409 by a stranger's database).
    Disjoint slices make that impossible; within one worker, tests run one at
    a time, so a port picked there is bound before the next one is picked.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    index = int(worker.removeprefix("gw") or 0) % max(count, 1)
    size = len(HARNESS_PORTS) // max(count, 1)
    start = HARNESS_PORTS.start + index * size
    return range(start, start + size)


def free_port() -> int:
    ports = _worker_ports()
    for _ in range(200):
        port = random.choice(ports)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below the ephemeral range")


@dataclass
class GatewayProcess:
    proc: subprocess.Popen[bytes]
    port: int
    env: dict[str, str]
    log_path: Path
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_healthy(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gateway exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(self.base_url + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"gateway did not become healthy:\n{self.log()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return int(self.proc.returncode)


def launch_gateway(
    home: Path,
    index: int,
    *args: str,
    env: dict[str, str] | None = None,
    wait: bool = True,
    **popen: Any,
) -> GatewayProcess:
    """Start `python -m gateway` on a free port, its data and log under ``home``."""
    port = free_port()
    full_env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "APP_ENV", "NODE_ENV")
    }
    full_env.update(
        {
            "PORT": str(port),
            "HOST": "127.0.0.1",
            "DATA_DIR": str(home / f"var-{index}"),
            "SECRET": TEST_SECRET,
            "APP_ENV": "test",
            "SHUTDOWN_TIMEOUT": "5",
            # Any free port: concurrent test runs must not fight over 2525.
            "SMTP_PORT": "0",
            # The submission port is also the one mail/ advertises: a real port.
            "SUBMISSION_PORT": str(free_port()),
            "SUBMISSIONS_PORT": "off",
            # Mailbox access on free ports (110, 995 and 4190 are one per machine).
            "POP3_PORT": "0",
            "POP3S_PORT": "0",
            "SIEVE_PORT": "0",
            # IMAP on a free port (143 and 993 are one per machine).
            "IMAP_PORT": "0",
            "IMAPS_PORT": "0",
        }
    )
    full_env.update(env or {})
    log_path = home / f"gateway-{index}.log"
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway", *args],
            cwd=ROOT,
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            **popen,  # e.g. process_group=0, to be signalled as a group
        )
    gp = GatewayProcess(proc=proc, port=int(full_env["PORT"]), env=full_env, log_path=log_path)
    if wait:
        try:
            gp.wait_healthy()
        except BaseException:
            gp.stop()
            raise
    return gp


@pytest.fixture
def gateway_process(tmp_path: Path) -> Iterator[Callable[..., GatewayProcess]]:
    started: list[GatewayProcess] = []

    def start(
        *args: str, env: dict[str, str] | None = None, wait: bool = True, **popen: Any
    ) -> GatewayProcess:
        gp = launch_gateway(tmp_path, len(started), *args, env=env, wait=False, **popen)
        started.append(gp)
        if wait:
            gp.wait_healthy()
        return gp

    yield start
    for gp in started:
        gp.stop()
