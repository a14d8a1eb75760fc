"""The ManageSieve listener: SIEVE_PORT (4190, RFC 5804), STARTTLS, submission's certificate."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mta.access.listener import Connection, Port
from mta.access.listener import serve as serve_ports
from mta.access.signin import SignIn
from mta.context import MtaContext
from mta.managesieve.parser import MAX_LINE, response
from mta.managesieve.session import SieveSession
from mta.smtp.limits import ConnectionLimits
from mta.submission import tls
from mta.submission.server import certificate


@asynccontextmanager
async def serve(ctx: MtaContext) -> AsyncIterator[list[asyncio.Server]]:
    """Listen on SIEVE_PORT unless it is off; yields the server (or none)."""
    config = ctx.config
    context = tls.server_context(*certificate(ctx))
    signin = SignIn.of(ctx)

    async def handle(conn: Connection) -> None:
        await SieveSession(ctx, conn, signin, context).run()

    async with serve_ports(
        "managesieve",
        handle,
        host=config.smtp_host,
        ports=[Port(config.sieve_port, False)],
        context=context,
        limits=ConnectionLimits(
            config.access_max_connections, config.access_max_connections_per_ip
        ),
        refusal=response("BYE", "too many connections; try again later", "TRYLATER"),
        max_line=MAX_LINE,
        reuse_port=config.smtp_reuse_port,
        production=ctx.runtime.settings.is_production,
    ) as servers:
        yield servers
