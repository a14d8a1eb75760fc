"""The aiosmtpd handler: each hook parses, calls its stage module, returns the reply."""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from aiosmtpd.smtp import SMTP, Envelope, Session

from mail.directory import Mailbox
from mta.context import MtaContext
from mta.delivery import Inbound, record_refused_rcpt
from mta.smtp import data, ehlo, mail, rcpt, replies
from mta.smtp.protocol import SMTPProtocol

log = logging.getLogger(__name__)


class InboundEnvelope(Envelope):
    """aiosmtpd's envelope plus what our stages decided for this transaction."""

    def __init__(self) -> None:
        super().__init__()
        self.sender: str = ""
        self.declared_size: int = 0
        self.mailboxes: list[tuple[str, Mailbox]] = []


class InboundSMTP(SMTPProtocol):
    """Our SMTP protocol with our envelope and enhanced codes on aiosmtpd's size replies."""

    _REWRITE: ClassVar[dict[str, str]] = {
        "552 Error: message size exceeds fixed maximum message size": replies.MESSAGE_TOO_BIG,
        "552 Error: Too much mail data": replies.MESSAGE_TOO_BIG,
    }

    def _create_envelope(self) -> Envelope:
        return InboundEnvelope()

    async def push(self, status: Any) -> None:
        if isinstance(status, str):
            status = self._REWRITE.get(status, status)
        await super().push(status)


class InboundHandler:
    def __init__(self, ctx: MtaContext) -> None:
        self.ctx = ctx

    async def handle_EHLO(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        hostname: str,
        responses: list[str],
    ) -> list[str]:
        session.host_name = hostname
        return ehlo.extensions(responses)

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
            envelope.mail_from = address
            envelope.mail_options.extend(mail_options)
            envelope.sender = sender
            envelope.declared_size = size
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
            decision = await rcpt.decide(self.ctx, address, envelope.declared_size)
        except Exception:
            log.exception("recipient lookup failed")
            return replies.LOOKUP_FAILURE
        if decision.reply == replies.RECIPIENT_OK and decision.mailbox is not None:
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

    async def handle_DATA(self, server: SMTP, session: Session, envelope: InboundEnvelope) -> str:
        raw = envelope.original_content or b""
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        return await data.receive(
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


def _peer_ip(session: Session) -> str:
    peer = session.peer
    if isinstance(peer, tuple) and peer:
        return str(peer[0])
    return str(peer or "")
