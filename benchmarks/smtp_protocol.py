"""CPU per message of the SMTP protocol layer alone (no storage), under Postfix's smtp-source.

    .venv/bin/python benchmarks/smtp_protocol.py [--messages 20000] [--sessions 10]
        [--size 10240] [--impl inbound|aiosmtpd] [--reuse]

One server process on uvloop runs the protocol class with a handler that
answers 250 to DATA and stores nothing: ``inbound`` is our ``InboundSMTP``
built as ``mta/smtp/server.py`` builds it, ``aiosmtpd`` is aiosmtpd's own
``SMTP``. smtp-source sends ``--messages`` messages of ``--size`` bytes over
``--sessions`` concurrent sessions, a new connection per message unless
``--reuse`` (smtp-source ``-d``: every session sends its messages over one
connection). The server's CPU time (user + system, from /proc/PID/stat) is
read before and after, so the figure that matters, CPU per message, does not
depend on what else the machine is doing; messages/s does. Not part of the
test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.processes import free_port, process_cpu_seconds  # noqa: E402
from benchmarks.smtp_inbound import wait_listening  # noqa: E402


def serve(port: int, impl: str) -> None:
    import uvloop
    from aiosmtpd.smtp import SMTP

    class Accept:
        async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
            return "250 OK"

    async def main() -> None:
        loop = asyncio.get_running_loop()
        if impl == "aiosmtpd":

            def factory() -> asyncio.Protocol:
                return SMTP(Accept(), hostname="bare", enable_SMTPUTF8=True, loop=loop)
        else:
            from mta.smtp.handler import InboundSMTP
            from mta.smtp.limits import ConnectionLimits, ErrorLimits
            from mta.smtp.protocol import protocol_factory

            factory = protocol_factory(
                InboundSMTP,
                Accept(),
                data_size_limit=10 * 1024 * 1024,
                enable_SMTPUTF8=True,
                hostname="bare",
                ident="mta",
                tls_context=None,
                timeout=300,
                # The limits mta/smtp/server.py gives it (their defaults), so their
                # bookkeeping is measured too.
                data_timeout=600,
                connections=ConnectionLimits(500, 50),
                errors=ErrorLimits(10, 20, 1.0),
                loop=loop,
            )
        await loop.create_server(factory, "127.0.0.1", port)
        await asyncio.Event().wait()

    logging.getLogger("mail.log").setLevel(logging.WARNING)
    uvloop.run(main())


def run(args: argparse.Namespace) -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--impl", args.impl], cwd=ROOT
    )
    try:
        wait_listening(port, server)
        options = (
            f"-s {args.sessions} -m {args.messages} -l {args.size} -M client.bench.test"
            f" -f sender@source.bench.test -t alice@bench.test 127.0.0.1:{port}"
        )
        command = ["smtp-source", *(["-d"] if args.reuse else []), *options.split()]
        cpu_before = process_cpu_seconds(server.pid)
        started = time.perf_counter()
        subprocess.run(command, check=True)
        seconds = time.perf_counter() - started
        cpu = process_cpu_seconds(server.pid) - cpu_before
    finally:
        server.terminate()
        server.wait()
    mode = "one connection per session" if args.reuse else "a new connection per message"
    print(
        f"{args.impl}: {args.messages} messages of {args.size} bytes, {args.sessions} sessions, "
        f"{mode}: {seconds:.2f} s, {args.messages / seconds:.0f} messages/s, server CPU "
        f"{cpu:.2f} s = {cpu / args.messages * 1e6:.0f} µs/message "
        f"(load average {os.getloadavg()[0]:.1f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--size", type=int, default=10240)
    parser.add_argument("--impl", choices=("inbound", "aiosmtpd"), default="inbound")
    parser.add_argument("--reuse", action="store_true", help="smtp-source -d")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.impl)
        return
    run(args)


if __name__ == "__main__":
    main()
