"""The real `python -m gateway` process: start-up, shutdown, restarts, refusals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import psycopg2
import pytest

from common.embedded_pg import shut_down
from gateway.main import all_migrations
from tests.conftest import ROOT

pytestmark = pytest.mark.process


def get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def postgres_running_on(pgdata: Path) -> bool:
    for proc in psutil.process_iter(["name", "cmdline"]):
        try:
            if proc.info["name"] == "postgres" and str(pgdata) in " ".join(
                proc.info["cmdline"] or []
            ):
                return proc.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            continue
    return False


def test_serves_each_service_in_its_own_shape(gateway_process, database_url):
    gw = gateway_process(env={"DATABASE_URL": database_url})
    assert get(gw.base_url + "/healthz") == (200, {"status": "ok"})
    assert get(gw.base_url + "/nope")[1]["name"] == "not_found"
    assert get(gw.base_url + "/cms/nope")[1]["code"] == "NOT_FOUND"
    assert get(gw.base_url + "/oauth/nope")[1]["error"] == "not_found"


def test_only_serves_one_service_at_the_root(gateway_process, database_url):
    gw = gateway_process("--only", "content", env={"DATABASE_URL": database_url})
    status, body = get(gw.base_url + "/nope")
    assert status == 404 and body["code"] == "NOT_FOUND"


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_embedded_database_survives_restart_and_stops_with_the_gateway(
    gateway_process, data_dir, stop_signal
):
    gw = gateway_process(env={"DATA_DIR": str(data_dir)})
    pgdata = (data_dir / "pgdata").resolve()
    assert postgres_running_on(pgdata)
    dsn = f"postgresql://postgres@/svc?host={pgdata}"
    with psycopg2.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute("CREATE TABLE public.kept (v text); INSERT INTO public.kept VALUES ('before')")
    conn.close()

    # Exit status 0: it shut itself down within stop()'s bound, not killed.
    assert gw.stop(stop_signal) == 0
    assert not postgres_running_on(pgdata)
    assert "refusing" not in gw.log()

    again = gateway_process(env={"DATA_DIR": str(data_dir)})
    assert get(again.base_url + "/healthz")[0] == 200
    with psycopg2.connect(dsn) as conn, conn.cursor() as cur:
        cur.execute("SELECT v FROM public.kept")
        assert cur.fetchall() == [("before",)]
    conn.close()
    assert again.stop() == 0
    assert not postgres_running_on(pgdata)


def test_sigterm_twice_to_the_process_group_is_one_clean_stop(gateway_process, data_dir):
    # What systemd and Docker do to `make run`: signal the whole group, and
    # make forwards the signal, so the gateway gets SIGTERM twice.
    gw = gateway_process(env={"DATA_DIR": str(data_dir)}, process_group=0)
    pgdata = (data_dir / "pgdata").resolve()
    assert postgres_running_on(pgdata)
    os.killpg(gw.proc.pid, signal.SIGTERM)
    time.sleep(0.2)  # two deliveries, not one coalesced pending signal
    os.killpg(gw.proc.pid, signal.SIGTERM)
    # Exit 0: one clean stop. The repeat lands while stopping (logged as a
    # repeat) or after it (ignored); a quick stop can finish in under 0.2 s.
    # Either way it is never taken as "force", and never kills by signal.
    assert gw.proc.wait(30) == 0
    assert "without a clean shutdown" not in gw.log()
    assert not postgres_running_on(pgdata)


def test_a_postgres_left_by_a_killed_gateway_is_stopped_at_the_next_start(
    gateway_process, data_dir
):
    pgdata = (data_dir / "pgdata").resolve()
    killed = gateway_process(env={"DATA_DIR": str(data_dir)})
    killed.proc.kill()
    killed.proc.wait()
    assert postgres_running_on(pgdata)  # what kill -9 leaves behind

    again = gateway_process(env={"DATA_DIR": str(data_dir)})
    assert "left running by a process that is gone" in again.log()
    assert get(again.base_url + "/healthz")[0] == 200
    assert again.stop() == 0
    assert "embedded postgres stopped" in again.log()
    assert not postgres_running_on(pgdata)


def test_shut_down_escalates_until_the_process_is_gone():
    # A "postmaster" that ignores the fast and the immediate shutdown signals.
    stubborn = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time\n"
            "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "signal.signal(signal.SIGQUIT, signal.SIG_IGN)\n"
            "print('ready', flush=True)\n"
            "time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
    )
    assert stubborn.stdout is not None and stubborn.stdout.readline() == b"ready\n"
    proc = psutil.Process(stubborn.pid)
    steps = ((signal.SIGINT, 0.3), (signal.SIGQUIT, 0.3), (signal.SIGKILL, 5.0))
    assert shut_down(proc, steps) is True
    assert stubborn.wait(5) == -signal.SIGKILL


def test_two_gateways_on_one_fresh_database_migrate_once(gateway_process, empty_database_url):
    a = gateway_process(env={"DATABASE_URL": empty_database_url}, wait=False)
    b = gateway_process(env={"DATABASE_URL": empty_database_url}, wait=False)
    a.wait_healthy()
    b.wait_healthy()
    with psycopg2.connect(empty_database_url) as conn, conn.cursor() as cur:
        for mset in all_migrations():
            cur.execute(f"SELECT name FROM {mset.schema}.schema_migrations ORDER BY name")
            assert [r[0] for r in cur.fetchall()] == [p.name for p in mset.files()]
    conn.close()


@pytest.mark.parametrize(
    ("env", "args", "reason"),
    [
        ({"APP_ENV": "production", "SECRET": "too-short"}, (), "SECRET must be at least 32"),
        ({"APP_ENV": "development"}, ("--production",), "development"),
    ],
)
def test_unsafe_production_refuses_to_boot(tmp_path, env, args, reason):
    full_env = {"PATH": "/usr/bin:/bin", "DATA_DIR": str(tmp_path), **env}
    proc = subprocess.run(
        [sys.executable, "-m", "gateway", *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and reason in lines[0]


def test_workers_share_the_port_and_stop_together(gateway_process, data_dir):
    gw = gateway_process("--workers", "2", env={"DATA_DIR": str(data_dir)})
    pgdata = (data_dir / "pgdata").resolve()
    children = [
        p for p in psutil.Process(gw.proc.pid).children() if "gateway" in " ".join(p.cmdline())
    ]
    assert len(children) == 2
    for _ in range(20):
        assert get(gw.base_url + "/healthz") == (200, {"status": "ok"})
        assert get(gw.base_url + "/cms/nope")[1]["code"] == "NOT_FOUND"
    assert gw.stop() == 0
    assert not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in children)
    assert not postgres_running_on(pgdata)
