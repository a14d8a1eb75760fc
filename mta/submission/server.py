"""The submission daemon: mail clients send through it (RFC 6409, RFC 8314).

On SUBMISSION_PORT (587) a client says EHLO, STARTTLS, then AUTH PLAIN or
LOGIN with an address and its password (mail/directory/ ``authenticate``);
on SUBMISSIONS_PORT (465) the whole connection is TLS from the first byte.
AUTH is not offered before TLS, except from the loopback when
SUBMISSION_PLAINTEXT_LOOPBACK is on (development's default). AUTH goes
through the sign-in every mail app's door shares (mta/access/signin.py):
a failure spends the client address's budgets (SUBMISSION_AUTH_FAILURES per
SUBMISSION_AUTH_WINDOW seconds, and AUTH_RATE_LIMIT_PER_SECOND, the ones
IMAP, POP3, ManageSieve, JMAP and webmail spend); once one is spent every
AUTH is answered 421 4.7.0 and the connection closed, whether the password
is right or not.

An authenticated client may send as its own address (or a +tag of it): the
envelope sender and every From address must be that, else 550 5.7.1. Any
recipient is accepted (this is the relay for authenticated users) whose
address passes the check every sending path shares (common/recipients.py:
553 5.1.3 malformed, 550 5.1.2 a special-use destination, with the reason). The
message is queued (mta/store/outbound.py) in a transaction committed before
the 250; the outbound worker signs and delivers it.

The protocol is the inbound daemon's (mta/smtp/: the DATA spool, the
deadlines, connection and error limits) with AUTH turned on.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import ssl
import uuid
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.utils import format_datetime, getaddresses, make_msgid
from typing import Any

from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

from common.db import Conn
from common.logs import new_request_id, set_request_id
from common.recipients import AddressRefused, check_recipient
from mail import directory
from mta import lines, received
from mta.access.signin import Refused, SignIn
from mta.context import MtaContext
from mta.outbound.submit import SendRefused, Sends, Submission, may_send_as, submit
from mta.smtp import ehlo, mail, replies
from mta.smtp.handler import InboundEnvelope, InboundSession, InboundSMTP
from mta.smtp.limits import ConnectionLimits, ErrorLimits
from mta.smtp.protocol import protocol_factory
from mta.smtp.rcpt import split_address
from mta.store.outbound import default_event_data
from mta.submission import tls

log = logging.getLogger(__name__)

DAEMON = "submission"


def _capture(
    server: SMTP, session: Session, envelope: Envelope, mechanism: str, auth_data: Any
) -> AuthResult:
    """aiosmtpd's authenticator is synchronous: keep the credentials, check them async."""
    return AuthResult(success=True, handled=False, auth_data=auth_data)


def _loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


class SubmissionSMTP(InboundSMTP):
    """The inbound protocol with AUTH: PLAIN and LOGIN, checked against the directory."""

    implicit_tls = False
    plaintext_loopback = False
    daemon = "submission"

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        first = self.transport is None
        super().connection_made(transport)
        if first and self.plaintext_loopback and not self.implicit_tls:
            peer = transport.get_extra_info("peername")
            if isinstance(peer, tuple) and _loopback(str(peer[0])):
                # Development: a local client may log in without TLS.
                self._auth_require_tls = False

    async def auth_PLAIN(self, _: Any, args: list[str]) -> AuthResult:
        return await self._check(await super().auth_PLAIN(_, args))

    async def auth_LOGIN(self, _: Any, args: list[str]) -> AuthResult:
        return await self._check(await super().auth_LOGIN(_, args))

    async def _check(self, captured: AuthResult) -> AuthResult:
        if not captured.success or not isinstance(captured.auth_data, LoginPassword):
            return captured
        handler = self.event_handler
        assert isinstance(handler, SubmissionHandler) and self.session is not None
        login = captured.auth_data.login.decode("utf-8", "replace")
        password = captured.auth_data.password.decode("utf-8", "replace")
        reply = await handler.authenticate(self.session, login, password)
        if isinstance(reply, directory.Principal):
            return AuthResult(success=True, auth_data=reply)
        if reply.startswith("421"):
            await self.push(reply)  # closes the connection (InboundSMTP.push)
            return AuthResult(success=False, handled=True)
        return AuthResult(success=False, handled=False, message=reply)


class SubmissionHandler:
    def __init__(self, ctx: MtaContext, *, implicit_tls: bool = False) -> None:
        self.ctx = ctx
        self.implicit_tls = implicit_tls
        self.signin = SignIn.of(ctx)

    async def authenticate(
        self, session: Session, login: str, password: str
    ) -> directory.Principal | str:
        """The sign-in every mail app's door shares (mta/access/signin.py): the
        client address's budgets asked first and spent on a failure, so a
        guesser gets one budget however it splits its guesses between
        submission, IMAP, POP3, ManageSieve, JMAP and webmail."""
        found = await self.signin.attempt(DAEMON, _peer_ip(session), login, password)
        if not isinstance(found, Refused):
            return found
        if found is Refused.THROTTLED:
            return replies.too_many_auth_failures(self.ctx.config.smtp_hostname)
        if found is Refused.UNAVAILABLE:
            return replies.AUTH_LOOKUP_FAILED
        return replies.AUTH_INVALID

    async def handle_EHLO(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        hostname: str,
        responses: list[str],
    ) -> list[str]:
        if mail.has_forbidden_character(hostname):
            session.host_name = None
            return [replies.BAD_HELO_SYNTAX]
        session.host_name = hostname
        # Inbound's list, then aiosmtpd's AUTH line back when it offered one.
        auth = [r for r in responses if r[4:].upper().startswith("AUTH")]
        out = ehlo.extensions(responses)
        return [*out[:-1], *auth, out[-1]]

    async def handle_MAIL(
        self,
        server: SMTP,
        session: Session,
        envelope: InboundEnvelope,
        address: str,
        mail_options: list[str],
    ) -> str:
        principal = session.auth_data
        assert isinstance(principal, directory.Principal)  # auth_required
        reply, sender, size = mail.check(address, mail_options, self.ctx.config.max_message_size)
        if sender is None:
            return reply
        if not may_send_as(principal.email, sender):
            return replies.SENDER_NOT_ALLOWED.format(login=principal.email, address=sender)
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
        if split_address(address) is None:
            return replies.BAD_RECIPIENT_SYNTAX
        try:
            # The syntax every sending path shares (.test accepted, RFC 6761 6.2).
            check_recipient(address)
        except AddressRefused as exc:
            return replies.recipient_refused(str(exc), on_purpose=exc.on_purpose)
        envelope.rcpt_tos.append(address)
        envelope.rcpt_options.extend(rcpt_options)
        return replies.RECIPIENT_OK

    async def handle_DATA(self, server: SMTP, session: Session, envelope: InboundEnvelope) -> str:
        principal = session.auth_data
        assert isinstance(principal, directory.Principal)
        raw = envelope.original_content or b""
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        # A client's bare LF (a script's Unix line ends) is made CRLF: what is
        # queued, signed and sent is standard mail (mta/lines.py).
        raw = lines.repair_submitted(raw)
        if not envelope.rcpt_tos:
            return replies.NEED_RECIPIENTS
        if b"\x00" in raw:
            return replies.NUL_IN_CONTENT
        head = raw.split(b"\r\n\r\n", 1)[0]
        headers = BytesHeaderParser(policy=compat32).parsebytes(head + b"\r\n\r\n")
        authors = [a for _, a in getaddresses([str(v) for v in headers.get_all("From") or []])]
        if not authors:
            return replies.NO_FROM
        for author in authors:
            if not may_send_as(principal.email, author):
                return replies.FROM_NOT_ALLOWED.format(login=principal.email, address=author)
        now = self.ctx.runtime.clock.now()
        message_id = str(uuid.uuid4())
        # One trace id per submitted message: its Received field, its queue row
        # and its log lines (the queue reads it from the context).
        trace_id = new_request_id()
        set_request_id(trace_id)
        tls_on = self.implicit_tls or session.ssl is not None
        trace = received.header(
            helo=session.host_name or "",
            ip=_peer_ip(session),
            hostname=self.ctx.config.smtp_hostname,
            # RFC 3848: ESMTPSA, authenticated over TLS.
            with_=received.protocol(
                esmtp=bool(session.extended_smtp), tls=tls_on, smtputf8=bool(envelope.smtp_utf8)
            )
            + "A",
            queue_id=message_id,
            recipients=list(envelope.rcpt_tos),
            now=now,
            trace=trace_id,
        )
        # RFC 6409 8.3, 8.2: a submission server may add what the client left out.
        added = b""
        if headers.get("Date") is None:
            added += f"Date: {format_datetime(now)}\r\n".encode()
        if headers.get("Message-ID") is None:
            domain = principal.email.rpartition("@")[2]
            added += f"Message-ID: {make_msgid(domain=domain)}\r\n".encode()
        config = self.ctx.config
        recipients = list(envelope.rcpt_tos)
        content = trace + added + raw

        request = Submission(
            message_id=message_id,
            source="submission",
            mail_from=envelope.sender,
            recipients=recipients,
            raw=content,
            account_id=principal.account_id,
            address_id=principal.address_id,
            # The plan's sends_per_month, counted in the queue's own transaction:
            # the send and the queued message commit together (or neither does),
            # with one fsync shared by the messages arriving together.
            sends=Sends.COUNT,
            login=principal.email,
            # From the header block alone (the body is not read again for it).
            event_data=default_event_data(message_id, head + b"\r\n\r\n", now, headers),
        )

        async def queue(conn: Conn) -> SendRefused | None:
            try:
                await submit(conn, request, now=now, max_lifetime=config.outbound_max_lifetime)
            except SendRefused as exc:
                # Nothing of this message was written; the batch's others go on.
                return exc
            return None

        try:
            # Committed before the 250; messages arriving together share the commit.
            refused = await self.ctx.committer.run(queue)
        except Exception:
            log.exception("queueing submitted mail failed; answered 451")
            return replies.QUEUE_FAILED
        if refused is not None and refused.sender:  # MAIL FROM was checked: a safety net
            return replies.SENDER_NOT_ALLOWED.format(login=principal.email, address=envelope.sender)
        if refused is not None:
            return replies.SENDS_EXHAUSTED
        if isinstance(session, InboundSession):
            session.errors = session.junk = 0
        return replies.submitted(message_id)


def _peer_ip(session: Session) -> str:
    peer = session.peer
    return str(peer[0]) if isinstance(peer, tuple) and peer else str(peer or "")


def certificate(ctx: MtaContext) -> tuple[Any, Any]:
    config = ctx.config
    if config.tls_cert_file and config.tls_key_file:
        return config.tls_cert_file, config.tls_key_file
    settings = ctx.runtime.settings
    if not settings.is_development:
        log.warning("submission has no TLS_CERT_FILE/TLS_KEY_FILE: using a self-signed certificate")
    return tls.self_signed(settings.data_dir / "tls", config.smtp_hostname)


def _factory(ctx: MtaContext, context: ssl.SSLContext, *, implicit: bool) -> Any:
    config = ctx.config
    loop = asyncio.get_running_loop()
    with warnings.catch_warnings():
        # aiosmtpd warns of AUTH without required TLS: on 465 the connection is TLS.
        warnings.simplefilter("ignore", UserWarning)
        factory = _protocols(ctx, context, implicit, loop)

    def build() -> SubmissionSMTP:
        protocol = factory()
        protocol.implicit_tls = implicit
        protocol.plaintext_loopback = config.submission_plaintext_loopback
        return protocol  # type: ignore[no-any-return]

    return build


def _protocols(
    ctx: MtaContext, context: ssl.SSLContext, implicit: bool, loop: asyncio.AbstractEventLoop
) -> Any:
    config = ctx.config
    return protocol_factory(
        SubmissionSMTP,
        SubmissionHandler(ctx, implicit_tls=implicit),
        data_size_limit=config.max_message_size,
        enable_SMTPUTF8=True,
        hostname=config.smtp_hostname,
        ident="mta",
        # 465 is TLS already: no STARTTLS, and AUTH offered at once.
        tls_context=None if implicit else context,
        require_starttls=False,
        auth_required=True,
        auth_require_tls=not implicit,
        authenticator=_capture,
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


@asynccontextmanager
async def serve(ctx: MtaContext) -> AsyncIterator[list[asyncio.Server]]:
    """Listen on SUBMISSION_PORT (STARTTLS) and SUBMISSIONS_PORT (implicit TLS)."""
    config = ctx.config
    logging.getLogger("mail.log").setLevel(logging.WARNING)
    cert, key = certificate(ctx)
    context = tls.server_context(cert, key)
    loop = asyncio.get_running_loop()
    servers: list[asyncio.Server] = []
    production = ctx.runtime.settings.is_production
    try:
        for port, implicit in ((config.submission_port, False), (config.submissions_port, True)):
            if port is None:
                continue
            try:
                servers.append(
                    await loop.create_server(
                        _factory(ctx, context, implicit=implicit),
                        host=config.smtp_host,
                        port=port,
                        ssl=context if implicit else None,
                        reuse_port=config.smtp_reuse_port,
                    )
                )
            except PermissionError:
                if production:
                    raise
                # 587 and 465 need privileges a development run rarely has.
                log.warning(
                    "submission: no permission to listen on port %s; set SUBMISSION_PORT"
                    " (and SUBMISSIONS_PORT) to a port above 1023 to send from a mail client",
                    port,
                )
        for srv in servers:
            log.info("submission listening on %s", srv.sockets[0].getsockname())
        yield servers
    finally:
        for srv in servers:
            srv.close()
        for srv in servers:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(srv.wait_closed(), 5.0)
