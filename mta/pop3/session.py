"""One POP3 session: AUTHORIZATION, then TRANSACTION, then UPDATE at QUIT (RFC 1939).

Sign-in is USER/PASS or AUTH PLAIN (RFC 5034), offered (CAPA) and accepted
only over TLS (POP3S, or after STLS) or, when SUBMISSION_PLAINTEXT_LOOPBACK
is on (development), from the loopback. A wrong password and an unknown
address get the same ``-ERR [AUTH]`` answer; a spent failure budget
(mta/access/signin.py) ``-ERR [SYS/TEMP]`` and the connection closes.

Hostile input: a line over parser.MAX_LINE is answered and the connection
closed; a NUL byte, an unknown command or one in the wrong state is an
error; past MtaSettings.access_soft_error_limit errors each answer waits,
at the hard limit the session ends. A client silent for POP3_LOGIN_TIMEOUT
before signing in, or POP3_TIMEOUT after (RFC 1939 3: at least ten minutes),
is told so and disconnected without the UPDATE state (its DELEs are undone).
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Awaitable, Callable
from contextlib import aclosing

from mail.directory import Principal
from mta.access.listener import Closed, Connection, ErrorCount, LineTooLong, is_loopback
from mta.access.signin import Refused, SignIn, sasl_plain
from mta.context import MtaContext
from mta.pop3 import parser
from mta.pop3.maildrop import Gone, Maildrop
from mta.pop3.parser import AUTH, SYS_TEMP, BadCommand, Command, err, multiline, number, ok
from mta.smtp.limits import ErrorLimits
from mta.store.emails import Listed

log = logging.getLogger(__name__)

DAEMON = "pop3"
TLS_HANDSHAKE_TIMEOUT = 30.0
# RETR and TOP are written in chunks of this size, each drained before the next.
CHUNK = 64 * 1024


class Pop3Session:
    def __init__(
        self, ctx: MtaContext, conn: Connection, signin: SignIn, tls: ssl.SSLContext | None
    ) -> None:
        self.ctx = ctx
        self.conn = conn
        self.signin = signin
        self.tls_context = tls
        config = ctx.config
        self.errors = ErrorCount(
            ErrorLimits(
                config.access_soft_error_limit,
                config.access_hard_error_limit,
                config.access_error_sleep,
            )
        )
        self.user: str | None = None
        self.maildrop: Maildrop | None = None
        self.handlers: dict[str, Callable[[Command], Awaitable[bool]]] = {
            "CAPA": self.capa,
            "STLS": self.stls,
            "USER": self.user_,
            "PASS": self.pass_,
            "AUTH": self.auth,
            "QUIT": self.quit,
            "STAT": self.stat,
            "LIST": self.list_,
            "RETR": self.retr,
            "DELE": self.dele,
            "NOOP": self.noop,
            "RSET": self.rset,
            "TOP": self.top,
            "UIDL": self.uidl,
        }

    # -- the loop -------------------------------------------------------------------
    async def run(self) -> None:
        self.conn.write(ok("POP3 server ready"))
        while True:
            config = self.ctx.config
            timeout = config.pop3_timeout if self.maildrop else config.pop3_login_timeout
            try:
                line = await self.conn.readline(timeout)
            except LineTooLong:
                self.conn.write(err("line too long"))
                return
            except Closed as exc:
                if exc.timed_out:
                    self.conn.write(err("autologout; idle for too long"))
                return
            try:
                command = parser.parse(line)
            except BadCommand as exc:
                if await self.error(err(str(exc))):
                    return
                continue
            handler = self.handlers.get(command.verb)
            if handler is None:
                if await self.error(err("unknown command")):
                    return
                continue
            if await handler(command):
                return
            await self.conn.drain()

    async def error(self, reply: bytes) -> bool:
        """Answer an error; True (after saying so) when it was one too many."""
        self.conn.write(reply)
        if await self.errors.error():
            self.conn.write(err("too many errors; closing", SYS_TEMP))
            return True
        await self.conn.drain()
        return False

    @property
    def plaintext_allowed(self) -> bool:
        if self.conn.tls:
            return True
        return self.ctx.config.submission_plaintext_loopback and is_loopback(self.conn.peer_ip)

    # -- AUTHORIZATION ------------------------------------------------------------------
    async def capa(self, command: Command) -> bool:
        caps = ["TOP", "UIDL", "RESP-CODES", "AUTH-RESP-CODE", "PIPELINING"]
        if self.maildrop is None:
            if self.plaintext_allowed:
                caps += ["USER", "SASL PLAIN"]
            if not self.conn.tls and self.tls_context is not None:
                caps.append("STLS")
        caps.append("IMPLEMENTATION mta")
        self.conn.write(multiline("Capability list follows", caps))
        return False

    async def stls(self, command: Command) -> bool:
        if self.maildrop is not None or self.conn.tls or self.tls_context is None:
            return await self.error(err("STLS is not available now"))
        if self.conn.pipelined():
            return True  # bytes sent before the handshake may not count as under TLS
        self.conn.write(ok("Begin TLS negotiation"))
        await self.conn.starttls(self.tls_context, TLS_HANDSHAKE_TIMEOUT)
        self.user = None
        return False

    async def _may_sign_in(self) -> bool:
        if self.maildrop is not None:
            await self.error(err("already signed in"))
            return False
        if not self.plaintext_allowed:
            await self.error(err("sign in over TLS: STLS first, or port POP3S", AUTH))
            return False
        return True

    async def user_(self, command: Command) -> bool:
        if not await self._may_sign_in():
            return self.errors.count >= self.errors.limits.hard
        if not command.rest:
            return await self.error(err("USER needs a mailbox address"))
        self.user = command.rest.strip()
        # The same answer whether the address exists or not.
        self.conn.write(ok("send PASS"))
        return False

    async def pass_(self, command: Command) -> bool:
        if not await self._may_sign_in():
            return self.errors.count >= self.errors.limits.hard
        if self.user is None:
            return await self.error(err("USER first"))
        login, self.user = self.user, None
        return await self._sign_in(login, command.rest)

    async def auth(self, command: Command) -> bool:
        if not command.args:
            # The mechanism list some clients ask for (RFC 1734's bare AUTH).
            self.conn.write(multiline("SASL mechanisms follow", ["PLAIN"]))
            return False
        if not await self._may_sign_in():
            return self.errors.count >= self.errors.limits.hard
        if command.args[0].upper() != "PLAIN":
            return await self.error(err("unsupported authentication mechanism"))
        if len(command.args) > 1:
            response = command.args[1]
        else:
            self.conn.write(b"+ \r\n")
            await self.conn.drain()
            try:
                response = (await self.conn.readline(self.ctx.config.pop3_login_timeout)).decode(
                    "ascii", "replace"
                )
            except LineTooLong:
                self.conn.write(err("line too long"))
                return True
        if response == "*":
            return await self.error(err("authentication cancelled"))
        credentials = sasl_plain(response)
        if credentials is None:
            return await self.error(err("the PLAIN response is not valid", AUTH))
        return await self._sign_in(*credentials)

    async def _sign_in(self, login: str, password: str) -> bool:
        outcome = await self.signin.attempt(DAEMON, self.conn.peer_ip, login, password)
        if outcome is Refused.THROTTLED:
            self.conn.write(err("too many failed sign-ins; try again later", SYS_TEMP))
            return True
        if outcome is Refused.UNAVAILABLE:
            self.conn.write(err("sign-in is unavailable; try again later", SYS_TEMP))
            return True
        if not isinstance(outcome, Principal):
            return await self.error(err("invalid user name or password", AUTH))
        try:
            self.maildrop = await Maildrop.open(self.ctx, outcome)
        except Exception:
            log.exception("pop3: listing the inbox failed")
            self.conn.write(err("the mailbox cannot be read now", SYS_TEMP))
            return True
        count, size = self.maildrop.totals()
        self.conn.write(ok(f"maildrop has {count} messages ({size} octets)"))
        return False

    async def quit(self, command: Command) -> bool:
        if self.maildrop is None:
            self.conn.write(ok("bye"))
            return True
        try:
            removed = await self.maildrop.commit()
        except Exception:
            log.exception("pop3: expunge at QUIT failed")
            self.conn.write(err("some deleted messages were not removed", SYS_TEMP))
            return True
        self.conn.write(ok(f"bye ({removed} messages removed)"))
        return True

    # -- TRANSACTION ----------------------------------------------------------------------
    async def _drop(self) -> Maildrop | None:
        if self.maildrop is None:
            await self.error(err("sign in first"))
        return self.maildrop

    async def _message(self, drop: Maildrop, arg: str) -> tuple[int, Listed] | None:
        n = number(arg)
        found = drop.get(n) if n is not None else None
        if n is None or found is None:
            deleted = n is not None and drop.exists(n)
            await self.error(err(f"message {n} already deleted" if deleted else "no such message"))
            return None
        return n, found

    async def stat(self, command: Command) -> bool:
        if (drop := await self._drop()) is None:
            return self._ended()
        count, size = drop.totals()
        self.conn.write(ok(f"{count} {size}"))
        return False

    async def list_(self, command: Command) -> bool:
        return await self._listing(command, lambda n, m: f"{n} {m.size}", "scan listing follows")

    async def uidl(self, command: Command) -> bool:
        return await self._listing(command, lambda n, m: f"{n} {m.id}", "unique-id listing follows")

    async def _listing(
        self, command: Command, line: Callable[[int, Listed], str], first: str
    ) -> bool:
        if (drop := await self._drop()) is None:
            return self._ended()
        if command.args:
            found = await self._message(drop, command.args[0])
            if found is None:
                return self._ended()
            self.conn.write(ok(line(*found)))
        else:
            self.conn.write(multiline(first, [line(n, m) for n, m in drop.live()]))
        return False

    async def retr(self, command: Command) -> bool:
        if (drop := await self._drop()) is None:
            return self._ended()
        found = await self._message(drop, command.args[0] if command.args else "")
        if found is None:
            return self._ended()
        message = drop.get(found[0])
        assert message is not None
        return await self._send(drop, message, f"{message.size} octets", None)

    async def top(self, command: Command) -> bool:
        if (drop := await self._drop()) is None:
            return self._ended()
        lines = number(command.args[1]) if len(command.args) == 2 else None
        if len(command.args) == 2 and command.args[1] == "0":
            lines = 0
        if lines is None:
            return await self.error(err("TOP needs a message number and a line count"))
        found = await self._message(drop, command.args[0])
        if found is None:
            return self._ended()
        message = drop.get(found[0])
        assert message is not None
        return await self._send(drop, message, "top of message follows", lines)

    async def _send(self, drop: Maildrop, message: Listed, first: str, top: int | None) -> bool:
        stuffer = parser.DotStuffer()
        started = False
        head = bytearray()
        try:
            # aclosing: TOP stops early, and the blob's file is closed then, not at GC.
            async with aclosing(drop.content(message)) as chunks:
                async for chunk in chunks:
                    if not started:
                        self.conn.write(ok(first))
                        started = True
                    if top is not None:
                        head += chunk
                        end = parser.top_part(head, top)
                        if end is None:
                            continue
                        self.conn.write(stuffer.feed(bytes(head[:end])))
                        head.clear()
                        break
                    for at in range(0, len(chunk), CHUNK):
                        self.conn.write(stuffer.feed(chunk[at : at + CHUNK]))
                        await self.conn.drain()
        except Gone:
            if not started:
                return await self.error(err("the message was deleted elsewhere"))
            # Mid-answer: nothing can be said in the reply any more.
            return True
        if not started:
            self.conn.write(ok(first))
        if head:  # TOP asked for more lines than the message has
            self.conn.write(stuffer.feed(bytes(head)))
        self.conn.write(stuffer.end())
        return False

    async def dele(self, command: Command) -> bool:
        if (drop := await self._drop()) is None:
            return self._ended()
        found = await self._message(drop, command.args[0] if command.args else "")
        if found is None:
            return self._ended()
        drop.deleted.add(found[0])
        self.conn.write(ok(f"message {found[0]} deleted"))
        return False

    async def noop(self, command: Command) -> bool:
        if await self._drop() is None:
            return self._ended()
        self.conn.write(ok())
        return False

    async def rset(self, command: Command) -> bool:
        if (drop := await self._drop()) is None:
            return self._ended()
        drop.deleted.clear()
        count, size = drop.totals()
        self.conn.write(ok(f"maildrop has {count} messages ({size} octets)"))
        return False

    def _ended(self) -> bool:
        """After an error answer: whether that error ended the session."""
        return self.errors.count >= self.errors.limits.hard
