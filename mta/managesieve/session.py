"""One ManageSieve session (RFC 5804 2): capabilities, STARTTLS, AUTHENTICATE, the script commands.

AUTHENTICATE PLAIN is offered (and accepted) only over TLS, or from the
loopback when SUBMISSION_PLAINTEXT_LOOPBACK is on (development), with the
sign-in budgets of mta/access/signin.py: a wrong password and an unknown
address both get ``NO "Authentication failed"``. Before sign-in only
CAPABILITY, STARTTLS, AUTHENTICATE, NOOP and LOGOUT are served.

Hostile input: an over-long line or a literal over the largest script ends
the session with BYE; a NUL, a syntax error, an unknown command or one
before sign-in is ``NO`` and an error (mta/access/listener.py ErrorCount);
SIEVE_LOGIN_TIMEOUT before sign-in and SIEVE_TIMEOUT after, then BYE.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Awaitable, Callable

from mail.directory import Principal
from mta.access.listener import Closed, Connection, ErrorCount, LineTooLong, is_loopback
from mta.access.signin import Refused, SignIn, sasl_plain
from mta.context import MtaContext
from mta.managesieve import scripts
from mta.managesieve.parser import (
    BadCommand,
    Command,
    LiteralTooLarge,
    read_command,
    read_string,
    response,
    string,
)
from mta.managesieve.scripts import ScriptError
from mta.sieve.compiler import MAX_SCRIPT_BYTES, SUPPORTED_EXTENSIONS, SieveError, compile_script
from mta.smtp.limits import ErrorLimits

log = logging.getLogger(__name__)

DAEMON = "managesieve"
TLS_HANDSHAKE_TIMEOUT = 30.0
PUBLIC = frozenset({"CAPABILITY", "STARTTLS", "AUTHENTICATE", "NOOP", "LOGOUT"})

Handler = Callable[[Command], Awaitable[bool]]


class SieveSession:
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
        self.principal: Principal | None = None
        self.handlers: dict[str, Handler] = {
            "CAPABILITY": self.capability,
            "STARTTLS": self.starttls,
            "AUTHENTICATE": self.authenticate,
            "LOGOUT": self.logout,
            "NOOP": self.noop,
            "UNAUTHENTICATE": self.unauthenticate,
            "HAVESPACE": self.havespace,
            "PUTSCRIPT": self.putscript,
            "CHECKSCRIPT": self.checkscript,
            "LISTSCRIPTS": self.listscripts,
            "SETACTIVE": self.setactive,
            "GETSCRIPT": self.getscript,
            "DELETESCRIPT": self.deletescript,
            "RENAMESCRIPT": self.renamescript,
        }

    # -- the loop -------------------------------------------------------------------
    async def run(self) -> None:
        self.conn.write(self._capabilities() + response("OK", "ManageSieve ready"))
        while True:
            config = self.ctx.config
            within = config.sieve_timeout if self.principal else config.sieve_login_timeout
            try:
                command = await read_command(self.conn, within)
            except LineTooLong:
                self.conn.write(response("BYE", "line too long"))
                return
            except LiteralTooLarge:
                self.conn.write(response("BYE", "literal too large", "QUOTA/MAXSIZE"))
                return
            except Closed as exc:
                if exc.timed_out:
                    self.conn.write(response("BYE", "idle for too long"))
                return
            except BadCommand as exc:
                if await self.error(str(exc)):
                    return
                continue
            handler = self.handlers.get(command.verb)
            if handler is None:
                if await self.error("unknown command"):
                    return
                continue
            if self.principal is None and command.verb not in PUBLIC:
                if await self.error("authenticate first"):
                    return
                continue
            if await handler(command):
                return
            await self.conn.drain()

    async def error(self, text: str, code: str | None = None) -> bool:
        """Answer NO; True (after BYE) when that was one error too many."""
        self.conn.write(response("NO", text, code))
        if await self.errors.error():
            self.conn.write(response("BYE", "too many errors"))
            return True
        await self.conn.drain()
        return False

    def refuse(self, text: str, code: str | None = None) -> bool:
        """Answer NO to a well-formed request refused (a script that does not compile,
        a name taken): the client's answer, not a protocol error, so not counted."""
        self.conn.write(response("NO", text, code))
        return False

    @property
    def plaintext_allowed(self) -> bool:
        if self.conn.tls:
            return True
        return self.ctx.config.submission_plaintext_loopback and is_loopback(self.conn.peer_ip)

    def _capabilities(self) -> bytes:
        caps: list[tuple[str, str | None]] = [
            ("IMPLEMENTATION", "mta"),
            ("SASL", "PLAIN" if self.plaintext_allowed and self.principal is None else ""),
            ("SIEVE", " ".join(sorted(SUPPORTED_EXTENSIONS))),
            ("VERSION", "1.0"),
        ]
        if not self.conn.tls and self.tls_context is not None:
            caps.append(("STARTTLS", None))
        if self.principal is not None:
            caps.append(("OWNER", self.principal.email))
        return b"".join(
            string(name) + (b" " + string(value) if value is not None else b"") + b"\r\n"
            for name, value in caps
        )

    def _strings(self, command: Command, low: int, high: int) -> list[str] | None:
        values = command.strings()
        if values is None or not low <= len(values) <= high:
            return None
        return values

    # -- before sign-in ---------------------------------------------------------------
    async def capability(self, command: Command) -> bool:
        if command.args:
            return await self.error("CAPABILITY takes no arguments")
        self.conn.write(self._capabilities() + response("OK"))
        return False

    async def starttls(self, command: Command) -> bool:
        if self.conn.tls or self.tls_context is None or self.principal is not None:
            return await self.error("STARTTLS is not available now")
        if self.conn.pipelined():
            return True  # bytes sent before the handshake may not count as under TLS
        self.conn.write(response("OK", "begin TLS negotiation"))
        await self.conn.starttls(self.tls_context, TLS_HANDSHAKE_TIMEOUT)
        # RFC 5804 2.2: the capabilities again, now under TLS.
        self.conn.write(self._capabilities() + response("OK", "TLS negotiation successful"))
        return False

    async def noop(self, command: Command) -> bool:
        values = self._strings(command, 0, 1)
        if values is None:
            return await self.error("NOOP takes at most one string")
        code = "TAG " + string(values[0]).decode() if values else None
        self.conn.write(response("OK", "done", code))
        return False

    async def logout(self, command: Command) -> bool:
        self.conn.write(response("OK", "logout completed"))
        return True

    async def authenticate(self, command: Command) -> bool:
        values = self._strings(command, 1, 2)
        if self.principal is not None:
            return await self.error("already authenticated")
        if values is None:
            return await self.error('AUTHENTICATE "PLAIN" [initial response]')
        if values[0].upper() != "PLAIN":
            return await self.error("unsupported mechanism")
        if not self.plaintext_allowed:
            return await self.error("authenticate over TLS: STARTTLS first", "ENCRYPT-NEEDED")
        if len(values) == 2:
            answer = values[1]
        else:
            self.conn.write(b'""\r\n')
            await self.conn.drain()
            try:
                reply = await read_string(self.conn, self.ctx.config.sieve_login_timeout)
            except (BadCommand, LiteralTooLarge):
                return await self.error("the response is not a string")
            if reply is None or reply == "*":
                return await self.error("authentication cancelled")
            answer = reply
        credentials = sasl_plain(answer)
        if credentials is None:
            return await self.error("the PLAIN response is not valid")
        outcome = await self.signin.attempt(DAEMON, self.conn.peer_ip, *credentials)
        if outcome is Refused.THROTTLED or outcome is Refused.UNAVAILABLE:
            self.conn.write(
                response("BYE", "too many failed sign-ins; try again later", "TRYLATER")
            )
            return True
        if not isinstance(outcome, Principal):
            return await self.error("Authentication failed")
        self.principal = outcome
        self.conn.write(response("OK", "authenticated"))
        return False

    # -- signed in ---------------------------------------------------------------------
    async def unauthenticate(self, command: Command) -> bool:
        self.principal = None
        self.conn.write(response("OK"))
        return False

    async def havespace(self, command: Command) -> bool:
        if len(command.args) != 2 or not isinstance(command.args[0], str):
            return await self.error('HAVESPACE "name" size')
        size = command.args[1]
        if isinstance(size, str) or not size.value.isdigit():
            return await self.error("the size is a number")
        try:
            scripts.check_name(command.args[0])
        except ScriptError as exc:
            return self.refuse(exc.message)
        if int(size.value) > MAX_SCRIPT_BYTES:
            return self.refuse(f"a script is at most {MAX_SCRIPT_BYTES} bytes", "QUOTA/MAXSIZE")
        self.conn.write(response("OK"))
        return False

    def _compile(self, text: str) -> str | None:
        """The compiler's error (``line 3: ...``), or None when the script compiles."""
        try:
            compile_script(text)
        except SieveError as exc:
            return str(exc)
        return None

    async def putscript(self, command: Command) -> bool:
        values = self._strings(command, 2, 2)
        if values is None:
            return await self.error('PUTSCRIPT "name" {size+} script')
        name, text = values
        if len(text.encode()) > MAX_SCRIPT_BYTES:
            return self.refuse(f"a script is at most {MAX_SCRIPT_BYTES} bytes", "QUOTA/MAXSIZE")
        problem = self._compile(text)
        if problem is not None:
            return self.refuse(problem)
        return await self._write(lambda conn, p, now: scripts.put(conn, p, name, text, now))

    async def checkscript(self, command: Command) -> bool:
        values = self._strings(command, 1, 1)
        if values is None:
            return await self.error("CHECKSCRIPT {size+} script")
        problem = self._compile(values[0])
        if problem is not None:
            return self.refuse(problem)
        self.conn.write(response("OK"))
        return False

    async def listscripts(self, command: Command) -> bool:
        assert self.principal is not None
        async with self.ctx.runtime.db.connection() as conn:
            named = await scripts.listing(conn, self.principal)
        self.conn.write(
            b"".join(string(n.name) + (b" ACTIVE" if n.active else b"") + b"\r\n" for n in named)
            + response("OK")
        )
        return False

    async def getscript(self, command: Command) -> bool:
        values = self._strings(command, 1, 1)
        if values is None:
            return await self.error('GETSCRIPT "name"')
        assert self.principal is not None
        async with self.ctx.runtime.db.connection() as conn:
            found = await scripts.find(conn, self.principal, values[0])
        if found is None:
            return self.refuse("there is no script of that name", "NONEXISTENT")
        raw = found.filter.script.encode()
        self.conn.write(b"{%d}\r\n" % len(raw) + raw + b"\r\n" + response("OK"))
        return False

    async def setactive(self, command: Command) -> bool:
        values = self._strings(command, 1, 1)
        if values is None:
            return await self.error('SETACTIVE "name"')
        name = values[0]
        return await self._write(lambda conn, p, now: scripts.activate(conn, p, name, now))

    async def deletescript(self, command: Command) -> bool:
        values = self._strings(command, 1, 1)
        if values is None:
            return await self.error('DELETESCRIPT "name"')
        return await self._write(lambda conn, p, now: scripts.delete(conn, p, values[0]))

    async def renamescript(self, command: Command) -> bool:
        values = self._strings(command, 2, 2)
        if values is None:
            return await self.error('RENAMESCRIPT "old" "new"')
        old, new = values
        return await self._write(lambda conn, p, now: scripts.rename(conn, p, old, new, now))

    async def _write(self, change: Callable[..., Awaitable[None]]) -> bool:
        """Run one change in a transaction: OK, or NO with the refusal's code."""
        assert self.principal is not None
        try:
            async with self.ctx.runtime.db.transaction() as conn:
                await change(conn, self.principal, self.ctx.runtime.clock.now())
        except ScriptError as exc:
            return self.refuse(exc.message, exc.code)
        self.conn.write(response("OK"))
        return False
