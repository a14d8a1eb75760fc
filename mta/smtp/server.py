"""Starting and stopping the inbound listener on the running event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mta.context import MtaContext
from mta.smtp.handler import InboundHandler, InboundSMTP
from mta.smtp.limits import ConnectionLimits, ErrorLimits
from mta.smtp.protocol import protocol_factory

log = logging.getLogger(__name__)

SHUTDOWN_GRACE = 5.0


def tls_context(ctx: MtaContext) -> ssl.SSLContext | None:
    config = ctx.config
    if not config.tls_enabled:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(config.smtp_tls_cert), str(config.smtp_tls_key))
    return context


@asynccontextmanager
async def serve(ctx: MtaContext) -> AsyncIterator[asyncio.Server]:
    """Listen on SMTP_HOST:SMTP_PORT until the block exits; yields the server."""
    config = ctx.config
    # aiosmtpd logs every connection, sender and recipient at INFO ("mail.log"): at
    # thousands of messages a minute that is a log write per line of SMTP.
    logging.getLogger("mail.log").setLevel(logging.WARNING)
    handler = InboundHandler(ctx)
    tls = tls_context(ctx)
    loop = asyncio.get_running_loop()

    factory = protocol_factory(
        InboundSMTP,
        handler,
        data_size_limit=config.max_message_size,
        enable_SMTPUTF8=True,
        hostname=config.smtp_hostname,
        ident="mta",
        tls_context=tls,
        timeout=config.smtp_timeout,
        data_timeout=config.smtp_data_timeout,
        connections=ConnectionLimits(
            config.smtp_max_connections, config.smtp_max_connections_per_ip
        ),
        errors=ErrorLimits(
            config.smtp_soft_error_limit,
            config.smtp_hard_error_limit,
            config.smtp_error_sleep,
            config.smtp_junk_command_limit,
        ),
        loop=loop,
    )

    server = await loop.create_server(
        factory,
        host=config.smtp_host,
        port=config.smtp_port,
        # Several `python -m mta smtp` processes may share the port (one per core):
        # the kernel spreads connections over them, as Postfix spreads them over smtpd.
        reuse_port=config.smtp_reuse_port,
    )
    port = server.sockets[0].getsockname()[1]
    log.info("SMTP inbound listening on %s:%s (TLS %s)", config.smtp_host, port, bool(tls))
    try:
        yield server
    finally:
        server.close()
        # Newer Pythons wait for open sessions here; an idle client must not hold shutdown.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.wait_closed(), SHUTDOWN_GRACE)


def bound_port(server: asyncio.Server) -> int:
    return int(server.sockets[0].getsockname()[1])
