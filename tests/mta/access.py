"""What the POP3 and ManageSieve tests share: a hosted mailbox with a password,
both daemons on free ports, mail delivered over SMTP, and a TLS client context."""

from __future__ import annotations

import imaplib
import smtplib
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace

from common.runtime import Runtime
from mta.context import MtaContext
from mta.imap import server as imap_server
from mta.managesieve import server as managesieve
from mta.pop3 import server as pop3
from mta.settings import MtaSettings
from mta.smtp.server import bound_port
from mta.submission import server as submission


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


@dataclass(frozen=True)
class Doors:
    """IMAPS and submissions (implicit TLS) of one process, sharing its sign-ins."""

    ctx: MtaContext
    imaps: int
    submissions: int


@asynccontextmanager
async def imap_and_submission(
    runtime: Runtime, config: MtaSettings, **changes: object
) -> AsyncIterator[Doors]:
    config = replace(
        config,
        imap_host="127.0.0.1",
        imap_port=None,
        imaps_port=0,
        submission_port=None,
        submissions_port=0,
        submission_plaintext_loopback=False,
        smtp_error_sleep=0.0,
        mta_sts=False,
        **changes,  # type: ignore[arg-type]
    )
    ctx = MtaContext.build(runtime, config)
    async with imap_server.serve(ctx) as imaps, submission.serve(ctx) as smtps:
        yield Doors(ctx, imap_server.bound_ports(imaps)[0], bound_port(smtps[0]))


def smtp_login(port: int, login: str, password: str) -> int:
    """The AUTH PLAIN reply's code over submissions; 0 when the server hung up instead
    of answering. (One mechanism: ``login()`` would try LOGIN after a failed PLAIN,
    two guesses.)"""
    with smtplib.SMTP_SSL("127.0.0.1", port, timeout=10, context=client_tls()) as client:
        client.user, client.password = login, password
        client.ehlo()
        try:
            return client.auth("PLAIN", client.auth_plain)[0]
        except smtplib.SMTPAuthenticationError as exc:
            return exc.smtp_code
        except smtplib.SMTPServerDisconnected:
            return 0
