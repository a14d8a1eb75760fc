"""An embedded PostgreSQL for development and tests, from the ``pgserver`` package.

``pgserver`` ships the PostgreSQL binaries inside its wheel, initialises a
data directory on first use and listens on a Unix socket inside it only (no
TCP port), so two checkouts with different DATA_DIRs never collide. It keeps a
per-data-directory list of the processes using the server and stops it when
the last one lets go.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg2
from psycopg2 import sql

log = logging.getLogger(__name__)
# pgserver narrates every command it runs at INFO; keep its warnings only.
logging.getLogger("pgserver").setLevel(logging.WARNING)

APP_DATABASE = "svc"


def _pgserver() -> Any:
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); harmless.
        warnings.simplefilter("ignore")
        import pgserver

    return pgserver


class EmbeddedPostgres:
    def __init__(self, pgdata: Path, *, delete_on_stop: bool = False) -> None:
        self.pgdata = pgdata.resolve()
        self.delete_on_stop = delete_on_stop
        self._server: Any = None

    def start(self) -> None:
        self.pgdata.mkdir(parents=True, exist_ok=True)
        self._server = _pgserver().get_server(
            self.pgdata, cleanup_mode="delete" if self.delete_on_stop else "stop"
        )
        log.info("embedded postgres ready in %s", self.pgdata)

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
        if self._server is None:
            return
        # pgserver registers the same clean-up with atexit; running it now stops
        # the server at shutdown rather than at interpreter exit, and the atexit
        # call then finds nothing left to do.
        self._server._cleanup()
        self._server = None
        log.info("embedded postgres stopped")
