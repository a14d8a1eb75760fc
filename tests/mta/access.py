"""What the POP3 and ManageSieve tests share: a hosted mailbox with a password,
both daemons on free ports, mail delivered over SMTP, and a TLS client context."""

from __future__ import annotations

import imaplib
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace

from common.runtime import Runtime
from mta.context import MtaContext
from mta.managesieve import server as managesieve
from mta.pop3 import server as pop3
from mta.settings import MtaSettings
from mta.smtp.server import bound_port


def client_tls() -> ssl.SSLContext:
    # The development certificate is self-signed: a client that pinned nothing skips the check.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def imap_login(port: int, login: str, password: str) -> str:
    """A LOGIN over IMAPS: "OK", or the server's refusal as imaplib raises it."""
    client = imaplib.IMAP4_SSL("127.0.0.1", port, ssl_context=client_tls(), timeout=10)
    try:
        return client.login(login, password)[0]
    except imaplib.IMAP4.error as exc:
        return str(exc)
    finally:
        client.shutdown()


def access_config(config: MtaSettings, **changes: object) -> MtaSettings:
    """Both daemons on free ports, errors not slowed (the limits are what is tested)."""
    return replace(
        config,
        pop3_port=0,
        pop3s_port=0,
        sieve_port=0,
        access_error_sleep=0.0,
        submission_plaintext_loopback=False,
        **changes,  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class Ports:
    pop3: int
    pop3s: int
    sieve: int


@asynccontextmanager
async def daemons(runtime: Runtime, config: MtaSettings) -> AsyncIterator[Ports]:
    ctx = MtaContext.build(runtime, config)
    async with pop3.serve(ctx) as pops, managesieve.serve(ctx) as sieves:
        yield Ports(bound_port(pops[0]), bound_port(pops[1]), bound_port(sieves[0]))
