"""``python -m mta smtp|submission|outbound``: one daemon in a process of its own.

``smtp`` is the inbound daemon (SMTP_PORT), ``submission`` the submission
daemon (SUBMISSION_PORT and SUBMISSIONS_PORT), ``outbound`` the queue worker.

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

from common.clock import Clock
from common.db import Database
from common.jobs import JobQueue
from common.runtime import Runtime
from common.settings import Settings, SettingsError, load_settings
from mta.context import MtaContext
from mta.outbound.worker import OutboundWorker
from mta.settings import load_mta_settings
from mta.smtp import server
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
        if await db.fetch_val("SELECT to_regclass('mta.emails') IS NOT NULL") is not True:
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
        elif daemon == "submission":
            async with submission.serve(ctx) as servers:
                ports = " ".join(str(server.bound_port(s)) for s in servers)
                print(f"mta submission listening on ports {ports}", flush=True)
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
        await db.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mta")
    parser.add_argument(
        "daemon", choices=("smtp", "submission", "outbound"), help="which daemon to run"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"mta: refusing to start: {exc}", file=sys.stderr)
        return 2
    try:
        import uvloop

        loop_factory = uvloop.new_event_loop
    except ImportError:  # pragma: no cover
        loop_factory = None  # type: ignore[assignment]
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(run_smtp(settings, args.daemon))
    except (StartupError, SettingsError) as exc:
        print(f"mta: refusing to start: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
