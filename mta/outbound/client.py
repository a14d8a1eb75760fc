"""SMTP to a remote server: opportunistic STARTTLS, reuse, pipelining, a bound per destination.

A connection is opened to one address of a route's hosts (in MX order; the
next on a connection failure), says EHLO with our SMTP_HOSTNAME and turns on
TLS whenever the server offers STARTTLS. Without an MTA-STS policy the
certificate is not checked (RFC 7435 opportunistic security: an unverified
TLS still beats plaintext, which is what Postfix's ``may`` level does); with
an enforced policy it must verify for the MX name, and a server without
STARTTLS is not sent to. After a transaction the connection goes back to its
destination's idle list for the next message (OUTBOUND_IDLE seconds), so a
burst to one domain shares a few sessions; at most OUTBOUND_PER_DESTINATION
sessions per destination are open at once. The conversation is
mta/outbound/smtp.py's: MAIL, RCPT and DATA pipelined when the server offers
PIPELINING (RFC 2920), one by one when it does not.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from mta import lines
from mta.outbound.routing import Route
from mta.outbound.smtp import Client, SMTPError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reply:
    code: int
    text: str
    host: str

    @property
    def line(self) -> str:
        return f"{self.code} {self.text}".strip()

    @property
    def ok(self) -> bool:
        return 200 <= self.code < 300

    @property
    def permanent(self) -> bool:
        return 500 <= self.code < 600


class ConnectFailed(Exception):
    """No host of the route could be reached (a temporary failure)."""


@dataclass
class _Session:
    client: Client
    host: str
    idle_since: float = 0.0


def _insecure_context() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class Connections:
    def __init__(
        self,
        helo: str,
        *,
        per_destination: int,
        idle: float,
        timeout: float,
    ) -> None:
        self.helo = helo
        self.per_destination = per_destination
        self.idle = idle
        self.timeout = timeout
        self._idle: dict[str, list[_Session]] = defaultdict(list)
        self._bounds: dict[str, asyncio.Semaphore] = {}
        self._insecure = _insecure_context()
        self._verified = ssl.create_default_context()

    def _bound(self, key: str) -> asyncio.Semaphore:
        bound = self._bounds.get(key)
        if bound is None:
            bound = self._bounds[key] = asyncio.Semaphore(self.per_destination)
        return bound

    async def _open(self, route: Route) -> _Session:
        errors = []
        for host in route.hosts:
            for address in host.addresses:
                client = None
                try:
                    client = await Client.connect(address, route.port, seconds=self.timeout)
                    await client.ehlo(self.helo)
                    if client.supports("STARTTLS"):
                        await client.starttls(
                            self._verified if route.require_tls else self._insecure,
                            server_hostname=host.name,
                        )
                        await client.ehlo(self.helo)
                    elif route.require_tls:
                        raise ConnectFailed(f"{host.name} offers no STARTTLS (MTA-STS enforce)")
                    return _Session(client, host.name)
                except (SMTPError, OSError, TimeoutError, ConnectFailed) as exc:
                    errors.append(f"{host.name}[{address}]: {exc or type(exc).__name__}")
                    if client is not None:
                        client.close()
        raise ConnectFailed("; ".join(errors) or "no host to connect to")

    @asynccontextmanager
    async def session(self, route: Route) -> AsyncIterator[_Session]:
        """A connected session to ``route``, reused when one is idle."""
        async with self._bound(route.key):
            session = None
            idle = self._idle[route.key]
            while idle:
                candidate = idle.pop()
                if (
                    candidate.client.is_connected
                    and time.monotonic() - candidate.idle_since < self.idle
                ):
                    session = candidate
                    break
                await _quit(candidate)
            if session is None:
                session = await self._open(route)
            try:
                yield session
            except BaseException:
                await _quit(session)
                raise
            if session.client.is_connected:
                session.idle_since = time.monotonic()
                idle.append(session)

    async def close(self) -> None:
        for sessions in self._idle.values():
            for session in sessions:
                await _quit(session)
        self._idle.clear()


async def _quit(session: _Session) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(session.client.quit(), 2)
    session.client.close()


async def transact(session: _Session, mail_from: str, rcpt: str, data: bytes) -> Reply:
    """One SMTP transaction for one recipient; the reply that decides its fate.

    A reply of the MAIL, RCPT or DATA stage is returned as it is (the caller
    sorts 2xx, 4xx, 5xx); a dropped connection raises :class:`Disconnected`
    (a temporary failure).
    """
    return (await transact_many(session, mail_from, [rcpt], data))[0]


async def transact_many(
    session: _Session, mail_from: str, rcpts: list[str], data: bytes
) -> list[Reply]:
    """One SMTP transaction for ``rcpts`` (pipelined when offered); each one's reply."""
    client = session.client
    options = []
    if not data.isascii() and client.supports("8BITMIME"):
        options.append("BODY=8BITMIME")
    if not (mail_from + "".join(rcpts)).isascii():
        if not client.supports("SMTPUTF8"):
            refused = "5.6.7 the server does not accept UTF-8 addresses (SMTPUTF8)"
            return [Reply(553, refused, session.host) for _ in rcpts]
        options.append("SMTPUTF8")
    # CRLF already when signed (mta/outbound/signer.py prepare): the signature covers these bytes.
    answers = await client.transaction(mail_from, rcpts, lines.to_crlf(data), options)
    return [Reply(a.code, a.text, session.host) for a in answers]
