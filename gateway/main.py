"""``python -m gateway``: start the database, migrate, serve, shut down cleanly."""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any

from aiohttp import web

from common import logs, metrics, passwords
from common.clock import Clock
from common.db import Database
from common.embedded_pg import EmbeddedPostgres
from common.jobs import JobQueue
from common.migrations import MigrationError, migrate
from common.runtime import Runtime
from common.settings import Settings, SettingsError, load_settings
from common.web import QuietClientErrors
from gateway import housekeeping, observe
from gateway.app import build_app
from gateway.services import all_migrations
from gateway.signals import StopSignals, ignore_late_repeats

log = logging.getLogger("gateway")


class StartupError(Exception):
    """Start-up cannot go on; the message is one line for the operator."""


async def open_runtime(settings: Settings, dsn: str, clock: Clock | None = None) -> Runtime:
    db = await Database.connect(dsn, size=settings.db_pool_size)
    try:
        await migrate(db, all_migrations())
    except MigrationError as exc:
        await db.close()
        raise StartupError(str(exc)) from exc
    clock = clock or Clock()
    runtime = Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock))
    housekeeping.register(runtime)
    return runtime


def _stop_on_signals() -> asyncio.Event:
    return StopSignals(on_force=_log_pending_tasks).stopped


async def _database_url(settings: Settings, pg: EmbeddedPostgres | None) -> str:
    """DATABASE_URL, or the embedded server's once it is started."""
    if pg is None:
        assert settings.database_url is not None
        return settings.database_url
    await asyncio.to_thread(pg.start)
    return await asyncio.to_thread(pg.ensure_database)


async def serve(settings: Settings, *, only: str | None = None, reuse_port: bool = False) -> None:
    stop = _stop_on_signals()

    pg: EmbeddedPostgres | None = None
    runtime: Runtime | None = None
    runner: web.AppRunner | None = None
    try:
        if settings.database_url is None:
            pg = EmbeddedPostgres(settings.pgdata_dir)
        dsn = await _database_url(settings, pg)
        runtime = await open_runtime(settings, dsn)
        app = build_app(runtime, only=only)
        runner = web.AppRunner(app, shutdown_timeout=settings.shutdown_timeout, access_log=None)
        await runner.setup()
        site = web.TCPSite(
            runner, settings.host, settings.port, reuse_address=True, reuse_port=reuse_port or None
        )
        await site.start()
        log.info(
            "serving on http://%s:%s (public %s)", settings.host, settings.port, settings.public_url
        )
        await stop.wait()
        await drain(app, settings.shutdown_drain)
        log.info("shutting down")
    finally:
        # Order matters: stop accepting and drain requests, stop workers and
        # daemons (cleanup_ctx), then the pool, then the database itself.
        # Each step is bounded, so a stuck daemon cannot keep the database up.
        if runner is not None:
            await _bounded("stopping the server", runner.cleanup(), settings.shutdown_timeout + 5)
            log.info("server, workers and daemons stopped")
        if runtime is not None:
            await _bounded("closing the pool", runtime.db.close(), 10)
        if pg is not None:
            await asyncio.to_thread(pg.stop)


async def drain(app: web.Application, seconds: float) -> None:
    """SIGTERM came: /readyz answers 503 while the listeners stay open ``seconds``.

    A load balancer or Kubernetes polling readiness stops routing here
    within that time; only then do the listeners close, so no client is
    refused a connection in between.
    """
    app[observe.health_key].draining = True
    if seconds > 0:
        log.info("draining: not ready, closing the listeners in %ss", seconds)
        await asyncio.sleep(seconds)


async def supervise(settings: Settings, *, only: str | None = None) -> int:
    """Serve with ``settings.workers`` processes sharing one port (SO_REUSEPORT).

    This process owns what must exist once: the embedded database and the
    migrations. Each child is a plain single-process gateway against that
    database; the kernel spreads connections over them. Children run the job
    workers too (claims are SKIP LOCKED) and the SMTP daemon on a shared port.
    If a child dies, all stop and the exit status says so: restarting is the
    process manager's job, as with any crashed server.
    """
    stop = _stop_on_signals()
    pg: EmbeddedPostgres | None = None
    children: list[asyncio.subprocess.Process] = []
    metrics_dir: str | None = None
    status = 0
    try:
        if settings.database_url is None:
            pg = EmbeddedPostgres(settings.pgdata_dir)
        dsn = await _database_url(settings, pg)
        runtime = await open_runtime(settings, dsn)  # migrate once, before any child
        await runtime.db.close()
        # One metrics directory for all children (prometheus-client's
        # multiprocess mode): whichever child is scraped reports them all.
        metrics_dir = tempfile.mkdtemp(prefix="svc-metrics-")
        env = {
            **settings.environ,
            "DATABASE_URL": dsn,
            "WEB_CONCURRENCY": "1",
            "SMTP_REUSE_PORT": "true",
            metrics.MULTIPROC_ENV: metrics_dir,
        }
        args = ["--reuse-port", *(["--only", only] if only else [])]
        for _ in range(settings.workers):
            children.append(
                # Own session: a terminal's Ctrl-C reaches only this process,
                # which then stops the children once, in order.
                await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "gateway", *args, env=env, start_new_session=True
                )
            )
        log.info("supervising %s gateway processes on port %s", len(children), settings.port)
        waits = [asyncio.ensure_future(child.wait()) for child in children]
        stopping = asyncio.ensure_future(stop.wait())
        done, _ = await asyncio.wait([stopping, *waits], return_when=asyncio.FIRST_COMPLETED)
        if stopping not in done:
            log.error("a gateway process exited; stopping the others")
            status = 1
        stopping.cancel()
    finally:
        for child in children:
            if child.returncode is None:
                child.send_signal(signal.SIGTERM)
        if children:
            try:
                await asyncio.wait_for(
                    asyncio.gather(*(c.wait() for c in children)),
                    settings.shutdown_drain + settings.shutdown_timeout + 15,
                )
            except TimeoutError:
                log.error("gateway processes did not stop in time; killing them")
                for child in children:
                    if child.returncode is None:
                        child.kill()
        if metrics_dir is not None:
            shutil.rmtree(metrics_dir, ignore_errors=True)
        if pg is not None:
            await asyncio.to_thread(pg.stop)
    return status


async def migrate_only(settings: Settings) -> list[str]:
    """``python -m gateway migrate``: apply pending migrations, then exit.

    For deployments that migrate once before the replicas start (the compose
    file's ``migrate`` service, the Kubernetes Job). A replica starting later
    still takes the advisory lock and finds nothing to do.
    """
    pg: EmbeddedPostgres | None = None
    try:
        if settings.database_url is None:
            pg = EmbeddedPostgres(settings.pgdata_dir)
        dsn = await _database_url(settings, pg)
        db = await Database.connect(dsn, size=1)
        try:
            return await migrate(db, all_migrations())
        except MigrationError as exc:
            raise StartupError(str(exc)) from exc
        finally:
            await db.close()
    finally:
        if pg is not None:
            await asyncio.to_thread(pg.stop)


async def _bounded(what: str, step: Coroutine[Any, Any, None], seconds: float) -> None:
    try:
        await asyncio.wait_for(step, seconds)
    except TimeoutError:
        log.error("%s took longer than %ss; going on", what, seconds)
        _log_pending_tasks()


def _log_pending_tasks() -> None:
    try:
        tasks = asyncio.all_tasks()
    except RuntimeError:  # no loop running any more
        return
    for task in tasks:
        if task is asyncio.current_task():
            continue
        frames = task.get_stack(limit=3)
        where = " <- ".join(f"{f.f_code.co_filename}:{f.f_lineno}" for f in frames)
        log.warning("still running: %s at %s", task.get_name(), where or "?")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m gateway")
    parser.add_argument(
        "command",
        nargs="?",
        choices=("serve", "migrate"),
        default="serve",
        help="serve (the default), or apply pending migrations and exit",
    )
    parser.add_argument(
        "--only", choices=("oauth", "content", "mail"), help="serve one service at the root"
    )
    parser.add_argument(
        "--production", action="store_true", help="refuse to start unless APP_ENV is production"
    )
    parser.add_argument(
        "--workers",
        type=int,
        help="serving processes sharing the port (default WEB_CONCURRENCY, else 1)",
    )
    # Set by the supervisor for its children: bind with SO_REUSEPORT.
    parser.add_argument("--reuse-port", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logs.configure()
    logging.getLogger("aiohttp.server").addFilter(QuietClientErrors())
    try:
        settings = load_settings(production=args.production)
    except SettingsError as exc:
        print(f"gateway: refusing to start: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings.log_format)
    if settings.environ.get(passwords.TEST_COST_ENV) == "test":
        passwords.use_test_cost()  # the test harness's processes (never production)
    try:
        import uvloop

        loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = uvloop.new_event_loop
    except ImportError:  # pragma: no cover - uvloop is in requirements; be lenient
        log.warning("uvloop not installed; using the default event loop")
        loop_factory = None
    if args.workers is not None:
        if args.workers < 1:
            print("gateway: refusing to start: --workers must be at least 1", file=sys.stderr)
            return 2
        settings = replace(settings, workers=args.workers)
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            if args.command == "migrate":
                applied = runner.run(migrate_only(settings))
                log.info("migrations applied: %s", ", ".join(applied) or "none pending")
                status = 0
            elif settings.workers > 1 and not args.reuse_port:
                status = runner.run(supervise(settings, only=args.only))
            else:
                runner.run(serve(settings, only=args.only, reuse_port=args.reuse_port))
                status = 0
    except (StartupError, SettingsError) as exc:
        # SettingsError here: a service's own variables, parsed when it is built.
        print(f"gateway: refusing to start: {exc}", file=sys.stderr)
        return 1
    ignore_late_repeats()
    return status
