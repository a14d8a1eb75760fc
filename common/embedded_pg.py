"""An embedded PostgreSQL for development and tests, from the ``pgserver`` package.

``pgserver`` ships the PostgreSQL binaries inside its wheel, initialises a
data directory on first use and listens on a Unix socket inside it only (no
TCP port), so two checkouts with different DATA_DIRs never collide. It keeps a
per-data-directory list of the processes using the server
(``.handle_pids.json``), and the server is meant to stop when the last of them
lets go.

Two things that list cannot do on its own, done here:

- A process that died without letting go (kill -9, a forced exit) stays on
  the list, so the postmaster it leaves runs on, and the next process would
  reuse it and never be the last to let go. At start, owners that are gone are
  struck off, and a postmaster no live owner holds is stopped before a fresh
  one is started.
- Stopping is verified: the postmaster (by its pid from ``postmaster.pid``) is
  asked for a fast shutdown, then an immediate one, then killed, each step
  bounded, and "stopped" is logged only once the process is gone.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import time
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psutil
import psycopg2
from psycopg2 import sql

log = logging.getLogger(__name__)
# pgserver narrates every command it runs at INFO; keep its warnings only.
logging.getLogger("pgserver").setLevel(logging.WARNING)

APP_DATABASE = "svc"
# PostgreSQL's shutdown modes by signal (see "Shutting Down the Server"): fast
# (roll back sessions, checkpoint), immediate (no checkpoint, recovery at the
# next start), then SIGKILL. Each gets this many seconds to end the postmaster.
SHUTDOWN_STEPS: tuple[tuple[signal.Signals, float], ...] = (
    (signal.SIGINT, 15.0),
    (signal.SIGQUIT, 5.0),
    (signal.SIGKILL, 5.0),
)
HANDLES_FILE = ".handle_pids.json"


def _pgserver() -> Any:
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); harmless.
        warnings.simplefilter("ignore")
        import pgserver

    return pgserver


def _gone(proc: psutil.Process) -> bool:
    # A zombie has ended; whoever reaps it (init) is not us.
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def postmaster_process(pgdata: Path) -> psutil.Process | None:
    """The running postmaster of ``pgdata`` per its postmaster.pid, or None.

    The pid is believed only if that process is a postgres serving this data
    directory: after a crash the file can name a pid since reused by another
    program, which must not be signalled.
    """
    try:
        pid = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
        proc = psutil.Process(pid)
        if proc.name() != "postgres" or str(pgdata) not in " ".join(proc.cmdline()):
            return None
    except (OSError, ValueError, IndexError, psutil.Error):
        return None
    return None if _gone(proc) else proc


def shut_down(
    proc: psutil.Process, steps: tuple[tuple[signal.Signals, float], ...] = SHUTDOWN_STEPS
) -> bool:
    """Stop a postmaster: fast, then immediate, then kill, each bounded. True once gone."""
    for sig, seconds in steps:
        try:
            proc.send_signal(sig)
        except psutil.NoSuchProcess:
            return True
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if _gone(proc):
                return True
            time.sleep(0.05)
        log.warning(
            "embedded postgres (pid %s) still running %ss after %s", proc.pid, seconds, sig.name
        )
    return _gone(proc)


def _live_owners(pgdata: Path, *, leaving: int | None = None) -> list[int]:
    """The handle list with dead processes (and ``leaving``) struck off, written back."""
    handles = _pgserver().utils.DiskList(pgdata / HANDLES_FILE)
    listed = handles.get()
    owners = [p for p in listed if p != leaving and psutil.pid_exists(p)]
    if owners != listed:
        # Only an existing list is rewritten: initdb wants a new data directory empty.
        handles.put(owners)
    return owners


class EmbeddedPostgres:
    def __init__(self, pgdata: Path, *, delete_on_stop: bool = False) -> None:
        self.pgdata = pgdata.resolve()
        self.delete_on_stop = delete_on_stop
        self._server: Any = None
        self._postmaster: psutil.Process | None = None

    def start(self) -> None:
        self.pgdata.mkdir(parents=True, exist_ok=True)
        pgserver = _pgserver()
        with pgserver.PostgresServer._lock:
            self._stop_orphan()
        self._server = pgserver.get_server(
            self.pgdata, cleanup_mode="delete" if self.delete_on_stop else "stop"
        )
        self._postmaster = postmaster_process(self.pgdata)
        log.info("embedded postgres ready in %s", self.pgdata)

    def _stop_orphan(self) -> None:
        """Stop a postmaster that no live process holds (its gateway died)."""
        if _live_owners(self.pgdata, leaving=os.getpid()):
            return
        orphan = postmaster_process(self.pgdata)
        if orphan is None:
            return
        log.warning(
            "stopping the embedded postgres (pid %s) left running by a process that is gone",
            orphan.pid,
        )
        if not shut_down(orphan):
            raise RuntimeError(f"could not stop the leftover postgres (pid {orphan.pid})")

    def dsn(self, database: str = "postgres") -> str:
        assert self._server is not None, "start() first"
        socket_dir = self._server.get_postmaster_info().socket_dir
        info = self._server.get_postmaster_info()
        port = f"&port={info.port}" if info.port else ""
        return f"postgresql://postgres@/{database}?host={quote(str(socket_dir))}{port}"

    def ensure_database(self, name: str = APP_DATABASE) -> str:
        """Create the application database if missing; return its DSN."""
        conn = psycopg2.connect(self.dsn())
        try:
            conn.autocommit = True
            with conn.cursor() as cur:
                cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
                if cur.fetchone() is None:
                    cur.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        finally:
            conn.close()
        return self.dsn(name)

    def stop(self) -> None:
        """Let go; as the last live holder, stop the postmaster and make sure it is gone."""
        if self._server is None:
            return
        pgserver = _pgserver()
        with pgserver.PostgresServer._lock:
            others = _live_owners(self.pgdata, leaving=os.getpid())
            # pgserver's own atexit clean-up now finds us off the list and does nothing.
            pgserver.PostgresServer._instances.pop(self.pgdata, None)
            self._server = None
            if others:
                log.info("embedded postgres left running for processes %s", others)
                return
            postmaster = self._postmaster or postmaster_process(self.pgdata)
            if postmaster is not None and not shut_down(postmaster):
                log.error("embedded postgres (pid %s) did not stop", postmaster.pid)
                return
        if self.delete_on_stop:
            shutil.rmtree(self.pgdata, ignore_errors=True)
        log.info("embedded postgres stopped")
