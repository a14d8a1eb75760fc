"""The POP3 listeners: POP3_PORT (110, STLS) and POP3S_PORT (995, TLS from the first byte).

The certificate is submission's (mta/submission/server.py ``certificate``:
TLS_CERT_FILE, else a self-signed one under DATA_DIR/tls). Connections are
capped per process and per client address (mta/access/listener.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mta.access.listener import Connection, Port
from mta.access.listener import serve as serve_ports
from mta.access.signin import SignIn
from mta.context import MtaContext
from mta.pop3.parser import MAX_LINE, SYS_TEMP, err
from mta.pop3.session import Pop3Session
from mta.smtp.limits import ConnectionLimits
from mta.submission import tls
from mta.submission.server import certificate


@asynccontextmanager
async def serve(ctx: MtaContext) -> AsyncIterator[list[asyncio.Server]]:
    """Listen on POP3_PORT and POP3S_PORT (those not off); yields their servers."""
    config = ctx.config
    context = tls.server_context(*certificate(ctx))
    signin = SignIn.of(ctx)

    async def handle(conn: Connection) -> None:
        await Pop3Session(ctx, conn, signin, context).run()

    async with serve_ports(
        "pop3",
        handle,
        host=config.smtp_host,
        ports=[Port(config.pop3_port, False), Port(config.pop3s_port, True)],
        context=context,
        limits=ConnectionLimits(
            config.access_max_connections, config.access_max_connections_per_ip
        ),
        refusal=err("too many connections; try again later", SYS_TEMP),
        max_line=MAX_LINE,
        reuse_port=config.smtp_reuse_port,
        production=ctx.runtime.settings.is_production,
    ) as servers:
        yield servers
