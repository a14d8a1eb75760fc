"""What the sending tests share: a hosted sender with a password and a DKIM key,
a loopback receiving SMTP server with scripted replies, MX records for it."""

from __future__ import annotations

import asyncio
import email
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session

from common.db import Database
from common.passwords import hash_password
from common.runtime import Runtime
from mail.dkim import keys
from mail.dkim import store as dkim_store
from tests.mta import factories
from tests.mta.dnsserver import LoopbackDNS

PASSWORD = "correct horse battery staple"


@dataclass
class Sender:
    account_id: str
    domain_id: str
    address_id: str
    email: str
    password: str = PASSWORD


async def hosted_sender(db: Database, address: str = "alice@example.test") -> Sender:
    local, _, domain = address.partition("@")
    account_id = await factories.account(db)
    domain_id = await factories.domain(db, account_id, domain)
    address_id = await factories.address(db, domain_id, local)
    await db.execute(
        "UPDATE mail.addresses SET password_hash = %s WHERE id = %s",
        (await hash_password(PASSWORD), address_id),
    )
    return Sender(account_id, domain_id, address_id, address)


async def dkim_key(
    runtime: Runtime, dns_server: LoopbackDNS, sender: Sender, algorithm: str, selector: str
) -> None:
    """An active key for the sender's domain, sealed as the panel seals it; its record in DNS."""
    pair = keys.generate_sync(algorithm)
    sealer = keys.dkim_sealer(runtime.settings.secret)
    domain = sender.email.partition("@")[2]
    async with runtime.db.transaction() as conn:
        await conn_execute(
            conn, "UPDATE mail.dkim_keys SET active = false WHERE domain_id = %s", sender.domain_id
        )
        await dkim_store.insert(
            conn,
            domain_id=sender.domain_id,
            selector=selector,
            algorithm=algorithm,
            private_key_sealed=keys.seal_private_key(sealer, pair),
            public_key_b64=pair.public_key_b64,
            active=True,
            now=runtime.clock.now(),
        )
    dns_server.add(
        f"{selector}._domainkey.{domain}", "TXT", keys.record_value(algorithm, pair.public_key_b64)
    )


async def conn_execute(conn: Any, sql: str, *params: Any) -> None:
    async with conn.cursor() as cur:
        await cur.execute(sql, params)


def mx(dns_server: LoopbackDNS, domain: str, host: str | None = None) -> None:
    """``domain``'s MX on the loopback (the tests point OUTBOUND_SMTP_PORT at the receiver)."""
    host = host or f"mx.{domain}"
    dns_server.add(domain, "MX", f"10 {host}.")
    dns_server.add(host, "A", "127.0.0.1")


@dataclass
class Received:
    mail_from: str
    rcpts: list[str]
    data: bytes
    tls: bool

    @property
    def message(self) -> email.message.Message:
        return email.message_from_bytes(self.data)


@dataclass
class ReceiverHandler:
    """Records what it accepts; ``replies`` (a queue per recipient) scripts the RCPT answers.
    Offers PIPELINING, so the outbound client sends MAIL, RCPT and DATA together."""

    messages: list[Received] = field(default_factory=list)
    rcpt_replies: dict[str, list[str]] = field(default_factory=dict)
    connections: int = 0
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    hold: asyncio.Event | None = None

    async def handle_EHLO(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        hostname: str,
        responses: list[str],
    ) -> list[str]:
        # aiosmtpd reads pipelined commands in order; it just does not say so.
        session.host_name = hostname
        return [*responses[:-1], "250-PIPELINING", responses[-1]]

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        scripted = self.rcpt_replies.get(address.lower())
        if scripted:
            reply = scripted.pop(0)
            if not reply.startswith("250"):
                return reply
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.hold is not None:
            await self.hold.wait()
        data = envelope.original_content or b""
        assert isinstance(data, bytes)
        # aiosmtpd keeps the null sender as "<>".
        sender = "" if envelope.mail_from in ("<>", None) else str(envelope.mail_from)
        self.messages.append(
            Received(sender, list(envelope.rcpt_tos), data, session.ssl is not None)
        )
        self.arrived.set()
        return "250 2.0.0 accepted"

    async def wait_for(self, count: int, seconds: float = 20) -> list[Received]:
        async def enough() -> None:
            while len(self.messages) < count:
                self.arrived.clear()
                await self.arrived.wait()

        await asyncio.wait_for(enough(), seconds)
        return self.messages


@asynccontextmanager
async def receiver(tls: ssl.SSLContext | None = None) -> AsyncIterator[tuple[ReceiverHandler, int]]:
    """An aiosmtpd server on 127.0.0.1 (STARTTLS when ``tls`` is given); (handler, port)."""
    handler = ReceiverHandler()
    loop = asyncio.get_running_loop()

    def build() -> SMTP:
        handler.connections += 1
        return SMTP(handler, hostname="mx.remote.test", tls_context=tls, loop=loop)

    srv = await loop.create_server(build, "127.0.0.1", 0)
    try:
        yield handler, int(srv.sockets[0].getsockname()[1])
    finally:
        srv.close()
