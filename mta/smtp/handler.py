"""The aiosmtpd handler: each hook parses, calls its stage module, returns the reply."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, cast

from aiosmtpd.smtp import SMTP, Envelope, Session

from common import metrics
from common.ids import short_id
from common.ratelimit import RateLimiter
from mail.directory import Recipient
from mta import lines, received
from mta.context import MtaContext
from mta.delivery import Inbound, record_refused_rcpt
from mta.smtp import data, ehlo, mail, rcpt, replies
from mta.smtp.limits import ConnectionLimits, ErrorLimits, is_error
from mta.smtp.mail import has_forbidden_character
from mta.smtp.protocol import SMTPProtocol

log = logging.getLogger(__name__)


class InboundEnvelope(Envelope):
    """aiosmtpd's envelope plus what our stages decided for this transaction."""

    def __init__(self) -> None:
        super().__init__()
        self.sender: str = ""
        self.declared_size: int = 0
        self.mailboxes: list[tuple[str, Recipient]] = []
        # VERP tokens of reports about mail we sent (mta/outbound/bounces.py).
        self.bounce_tokens: list[str] = []
        # Original senders of redirected mail whose bounces this is (mta/srs.py).
        self.srs_returns: list[str] = []

    def accept_sender(self, address: str, options: list[str], sender: str, size: int) -> None:
        """What MAIL FROM sets once accepted (inbound and submission alike)."""
        self.mail_from = address
        self.mail_options.extend(options)
        self.sender = sender
        self.declared_size = size


class InboundSession(Session):
    """aiosmtpd's session plus the errors this client made without delivering mail."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(loop)
        self.errors = 0
        self.junk = 0  # NOOP, RSET, VRFY, HELP since the last delivered message


def _junk_command(name: str) -> Callable[[InboundSMTP, str], Awaitable[None]]:
    command = getattr(SMTP, f"smtp_{name}")

    @functools.wraps(command)
    async def counted(self: InboundSMTP, arg: str) -> None:
        self._junk()
        await command(self, arg)

    return counted


def _staged(name: str) -> Callable[[InboundSMTP, str], Awaitable[None]]:
    """MAIL, RCPT and DATA as the protocol runs them, remembering the stage for the metrics."""
    command = getattr(SMTPProtocol, f"smtp_{name}")

    @functools.wraps(command)
    async def staged(self: InboundSMTP, arg: str) -> None:
        self._stage = name.lower()
        try:
            await command(self, arg)
        finally:
            self._stage = None

    return staged


# Reply lines by the metrics reason they count under (their constant's name).
REASONS = {
    value: name.lower()
    for name, value in vars(replies).items()
    if name.isupper() and isinstance(value, str) and value[:1] in ("4", "5")
}


def refusal_reason(status: str) -> str:
    """A bounded label for a refused reply: its name in replies.py, else its codes."""
    known = REASONS.get(status)
    if known is not None:
        return known
    parts = status.split(" ", 2)
    if len(parts) >= 2 and parts[1][:1] in ("4", "5") and parts[1].count(".") == 2:
        return f"{parts[0]}_{parts[1]}"
    return parts[0][:3]


class InboundSMTP(SMTPProtocol):
    """Our SMTP protocol: our envelope, enhanced codes on aiosmtpd's size replies, and limits.

    ``connections`` caps open connections (a connection over the cap gets 421
    and is closed before any SMTP); ``errors`` slows down, then drops, a client
    whose replies keep being errors. Both are shared by every connection of a
    listener; the counts of one connection live in its session.
    """

    _REWRITE: ClassVar[dict[str, str]] = {
        "552 Error: message size exceeds fixed maximum message size": replies.MESSAGE_TOO_BIG,
        "552 Error: Too much mail data": replies.MESSAGE_TOO_BIG,
    }
    # Per connection; set on the instance when it applies.
    _refused = False
    _counted_ip: str | None = None
    _stage: str | None = None
    # The metrics' daemon label.
    daemon: ClassVar[str] = "inbound"

    def __init__(
        self,
        handler: Any,
        *,
        connections: ConnectionLimits | None = None,
        errors: ErrorLimits | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(handler, **kwargs)
        self.connections = connections
        self.error_limits = errors

    def _junk(self) -> None:
        """Count a command that moves no mail; past the limit each one is an error."""
        session = self.session
        if self.error_limits is not None and isinstance(session, InboundSession):
            session.junk += 1
            if session.junk > self.error_limits.junk:
                session.errors += 1

    # The commands that move no mail, counted then answered as aiosmtpd does
    # (wraps keeps their HELP syntax, which aiosmtpd reads off the method).
    smtp_NOOP = _junk_command("NOOP")
    smtp_RSET = _junk_command("RSET")
    smtp_VRFY = _junk_command("VRFY")
    smtp_HELP = _junk_command("HELP")
    smtp_MAIL = _staged("MAIL")
    smtp_RCPT = _staged("RCPT")
    smtp_DATA = _staged("DATA")

    def _create_envelope(self) -> Envelope:
        return InboundEnvelope()

    def _create_session(self) -> Session:
        return InboundSession(self.loop)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # STARTTLS calls this again with the TLS transport: that is no new connection.
        if self.transport is None and self.connections is not None:
            ip = _ip_of(transport.get_extra_info("peername"))
            if not self.connections.admit(ip):
                log.warning("refused a connection from %s: too many connections", ip)
                # A cast, not an isinstance check: uvloop's TCPTransport writes
                # but derives from no asyncio transport class.
                writer = cast(asyncio.WriteTransport, transport)
                writer.write(f"{replies.too_many_connections(self.hostname)}\r\n".encode())
                writer.close()
                self._refused = True
                metrics.SMTP_CONNECTIONS_REFUSED.labels(self.daemon).inc()
                return
            self._counted_ip = ip
        if self.transport is None:
            metrics.SMTP_SESSIONS.labels(self.daemon).inc()
        super().connection_made(transport)

    def connection_lost(self, error: Exception | None) -> None:
        if self._refused:
            return  # aiosmtpd never started on it: nothing to stop
        if self._counted_ip is not None and self.connections is not None:
            self.connections.release(self._counted_ip)
            self._counted_ip = None
        super().connection_lost(error)

    async def push(self, status: Any) -> None:
        if not isinstance(status, str):
            await super().push(status)
            return
        status = self._REWRITE.get(status, status)
        if self._stage is not None:
            self._count(status)
        session = self.session
        limits = self.error_limits
        if limits is not None and isinstance(session, InboundSession):
            if is_error(status):
                session.errors += 1
            if limits.soft and session.errors >= limits.soft:
                # Postfix's "sleep on anything": every reply of an erring client waits.
                await asyncio.sleep(limits.sleep)
            if session.errors >= limits.hard:
                await super().push(status)
                status = replies.too_many_errors(self.hostname)
        await super().push(status)
        if status.startswith("421") and self.transport is not None:
            # RFC 5321 3.8: 421 closes the channel; whatever the client sends next is not read.
            self.transport.close()

    def _count(self, status: str) -> None:
        if status[:1] in ("4", "5"):
            metrics.SMTP_REFUSED.labels(self.daemon, self._stage, refusal_reason(status)).inc()
        elif self._stage == "data" and status.startswith("250"):
            metrics.SMTP_ACCEPTED.labels(self.daemon).inc()


class InboundHandler:
    def __init__(self, ctx: MtaContext) -> None:
        self.ctx = ctx
        self.limiter = RateLimiter(ctx.runtime.db, ctx.runtime.clock)

    async def handle_EHLO(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        hostname: str,
        responses: list[str],
    ) -> list[str]:
        if has_forbidden_character(hostname):
            session.host_name = None  # MAIL answers "send HELO first" until a good one
            return [replies.BAD_HELO_SYNTAX]
        session.host_name = hostname
        return ehlo.extensions(responses)

    async def handle_HELO(
        self, server: SMTP, session: Session, envelope: Envelope, hostname: str
    ) -> str:
        if has_forbidden_character(hostname):
            session.host_name = None
            return replies.BAD_HELO_SYNTAX
        session.host_name = hostname
        return f"250 {server.hostname}"  # what aiosmtpd answers without this hook

    async def handle_MAIL(
        self,
        server: SMTP,
        session: Session,
        envelope: InboundEnvelope,
        address: str,
        mail_options: list[str],
    ) -> str:
        reply, sender, size = mail.check(address, mail_options, self.ctx.config.max_message_size)
        if sender is not None:
            envelope.accept_sender(address, mail_options, sender, size)
        return reply

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: InboundEnvelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        if len(envelope.rcpt_tos) >= self.ctx.config.max_recipients:
            return replies.TOO_MANY_RECIPIENTS
        try:
            decision = await rcpt.decide(self.ctx, address, envelope.declared_size, envelope.sender)
        except Exception:
            log.exception("recipient lookup failed")
            return replies.LOOKUP_FAILURE
        if decision.reply in REFUSED_RECIPIENT and await self._over_rcpt_budget(session):
            return replies.too_many_unknown_recipients(self.ctx.config.smtp_hostname)
        if decision.bounce_token is not None:
            envelope.rcpt_tos.append(address)
            envelope.bounce_tokens.append(decision.bounce_token)
        elif decision.srs_return is not None:
            envelope.rcpt_tos.append(address)
            envelope.srs_returns.append(decision.srs_return)
        elif decision.reply == replies.RECIPIENT_OK and decision.mailbox is not None:
            envelope.rcpt_tos.append(address)
            envelope.rcpt_options.extend(rcpt_options)
            envelope.mailboxes.append((address, decision.mailbox))
        elif decision.reply == replies.OVER_QUOTA and decision.mailbox is not None:
            await record_refused_rcpt(
                self.ctx,
                decision.mailbox,
                ip=_peer_ip(session),
                sender=envelope.sender,
                outcome="refused: over quota",
            )
        return decision.reply

    async def _over_rcpt_budget(self, session: Session) -> bool:
        """Count a refused recipient against the client's address, across connections."""
        config = self.ctx.config
        try:
            decision = await self.limiter.hit(
                f"mta:rcpt-refused:{_peer_ip(session)}",
                config.smtp_rcpt_errors_per_ip,
                config.smtp_rcpt_error_window,
            )
        except Exception:
            # The budget protects against probing; it must not stop mail when the
            # database hiccups (the lookup itself would have answered 451 then).
            log.exception("rate limiter failed")
            return False
        return not decision.allowed

    async def handle_DATA(self, server: SMTP, session: Session, envelope: InboundEnvelope) -> str:
        raw = envelope.original_content or b""
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        bare = lines.bare_line_end(raw)
        if bare is not None:
            return replies.bare_line_end(bare)
        if envelope.bounce_tokens:
            reply = await data.receive_reports(self.ctx, envelope.bounce_tokens, raw)
            if not reply.startswith("250") or not (envelope.mailboxes or envelope.srs_returns):
                return reply
        if envelope.srs_returns:
            reply = await data.return_bounces(
                self.ctx, envelope.srs_returns, _trace(self.ctx, session, envelope) + raw
            )
            if not envelope.mailboxes or not reply.startswith("250"):
                return reply
        reply = await data.receive(
            self.ctx,
            Inbound(
                raw=raw,
                mail_from=envelope.sender,
                recipients=list(envelope.mailboxes),
                ip=_peer_ip(session),
                helo=session.host_name or "",
                esmtp=bool(session.extended_smtp),
                tls=session.ssl is not None,
                smtputf8=bool(envelope.smtp_utf8),
            ),
        )
        if reply.startswith("250") and isinstance(session, InboundSession):
            # Postfix's limits count errors "without delivering mail".
            session.errors = session.junk = 0
        return reply


# Refusals that say "no such recipient here": what a prober collects.
REFUSED_RECIPIENT = frozenset(
    {replies.UNKNOWN_USER, replies.RELAY_DENIED, replies.BAD_RECIPIENT_SYNTAX}
)


def _trace(ctx: MtaContext, session: Session, envelope: InboundEnvelope) -> bytes:
    """Our Received field on a bounce we send on: the hop count of RFC 5321 6.3."""
    return received.header(
        helo=session.host_name or "",
        ip=_peer_ip(session),
        hostname=ctx.config.smtp_hostname,
        with_=received.protocol(
            esmtp=bool(session.extended_smtp),
            tls=session.ssl is not None,
            smtputf8=bool(envelope.smtp_utf8),
        ),
        queue_id=short_id(),
        recipients=list(envelope.srs_returns),
        now=ctx.runtime.clock.now(),
    )


def _peer_ip(session: Session) -> str:
    return _ip_of(session.peer)


def _ip_of(peer: Any) -> str:
    if isinstance(peer, tuple) and peer:
        return str(peer[0])
    return str(peer or "")
