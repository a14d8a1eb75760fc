"""``python -m mta smtp|submission|imap|pop3|managesieve|outbound|jmap``: one daemon per process.

``smtp`` is the inbound daemon (SMTP_PORT), ``submission`` the submission
daemon (SUBMISSION_PORT and SUBMISSIONS_PORT), ``imap`` the IMAP server
(IMAP_PORT and IMAPS_PORT), ``pop3`` POP3 (POP3_PORT and POP3S_PORT),
``managesieve`` ManageSieve (SIEVE_PORT), ``outbound`` the queue worker;
``jmap`` the JMAP server (session, API, upload, download, EventSource) on
JMAP_HOST:JMAP_PORT (default 4400), the same routes the gateway serves.

Against the gateway's database (DATABASE_URL, already migrated by the
gateway) and the same DATA_DIR blob store; run as many as the load needs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Sequence
from dataclasses import replace

from common import logs
from common.clock import Clock
from common.db import Database
from common.jobs import JobQueue
from common.runtime import Runtime
from common.settings import Settings, SettingsError, load_settings
from mta.context import MtaContext
from mta.imap import server as imap
from mta.managesieve import server as managesieve
from mta.outbound.worker import OutboundWorker
from mta.pop3 import server as pop3
from mta.settings import load_mta_settings
from mta.smtp import server
from mta.store import schema
from mta.store.raw import close_message_files
from mta.submission import server as submission

log = logging.getLogger("mta")


class StartupError(Exception):
    pass


async def run_smtp(settings: Settings, daemon: str = "smtp") -> None:
    if not settings.database_url:
        raise StartupError("DATABASE_URL is required (the gateway owns the embedded database)")
    config = replace(load_mta_settings(settings), smtp_enabled=True)
    if daemon != "smtp":
        # The standalone outbound worker serves no port, submission serves its own.
        config = replace(config, outbound_enabled=daemon == "outbound")
    db = await Database.connect(settings.database_url, size=settings.db_pool_size)
    try:
        async with db.connection() as conn:
            migrated = await schema.has_table(conn, "emails")
        if not migrated:
            raise StartupError("the database is not migrated; start the gateway once first")
        clock = Clock()
        runtime = Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock))
        ctx = MtaContext.build(runtime, config)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        if daemon == "smtp":
            async with server.serve(ctx) as smtp:
                # One line a supervisor (or a test) can read to learn the port.
                print(f"mta smtp listening on port {server.bound_port(smtp)}", flush=True)
                await stop.wait()
        elif daemon in ("submission", "pop3", "managesieve"):
            serve = {"submission": submission, "pop3": pop3, "managesieve": managesieve}[daemon]
            async with serve.serve(ctx) as servers:
                ports = " ".join(str(server.bound_port(s)) for s in servers)
                print(f"mta {daemon} listening on ports {ports}", flush=True)
                await stop.wait()
        elif daemon == "imap":
            async with imap.serve(ctx) as servers:
                ports = " ".join(str(p) for p in imap.bound_ports(servers))
                print(f"mta imap listening on ports {ports}", flush=True)
                await stop.wait()
        else:
            worker = OutboundWorker(ctx)
            task = asyncio.create_task(worker.run())
            print("mta outbound worker running", flush=True)
            await stop.wait()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        log.info("shutting down")
    finally:
        await close_message_files()
        await db.close()


async def run_jmap(settings: Settings) -> None:
    from aiohttp import web

    from common.settings import read_int, read_str
    from mta.jmap.service import JmapService

    if not settings.database_url:
        raise StartupError("DATABASE_URL is required (the gateway owns the embedded database)")
    db = await Database.connect(settings.database_url, size=settings.db_pool_size)
    try:
        async with db.connection() as conn:
            migrated = await schema.has_table(conn, "uploads")
        if not migrated:
            raise StartupError("the database is not migrated; start the gateway once first")
        clock = Clock()
        runtime = Runtime(settings=settings, db=db, clock=clock, jobs=JobQueue(db, clock))
        service = JmapService(runtime)
        app = service.create_app()
        runner = web.AppRunner(app)
        await runner.setup()
        host = read_str(settings.environ, "JMAP_HOST", settings.host)
        port = read_int(settings.environ, "JMAP_PORT", 4400, minimum=0, maximum=65535)
        site = web.TCPSite(runner, host, port)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with service.lifespan():  # type: ignore[union-attr]
            await site.start()
            bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            print(f"mta jmap listening on port {bound}", flush=True)
            await stop.wait()
            log.info("shutting down")
            await runner.cleanup()
    finally:
        await close_message_files()
        await db.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mta")
    parser.add_argument(
        "daemon",
        choices=("smtp", "submission", "imap", "pop3", "managesieve", "outbound", "jmap"),
        help="which daemon to run",
    )
    args = parser.parse_args(argv)
    logs.configure()
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"mta: refusing to start: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings.log_format)  # LOG_FORMAT, as the gateway
    try:
        import uvloop

        loop_factory = uvloop.new_event_loop
    except ImportError:  # pragma: no cover
        loop_factory = None  # type: ignore[assignment]
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            if args.daemon == "jmap":
                runner.run(run_jmap(settings))
            else:
                runner.run(run_smtp(settings, args.daemon))
    except (StartupError, SettingsError) as exc:
        print(f"mta: refusing to start: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
