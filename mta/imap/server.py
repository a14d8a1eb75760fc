"""The IMAP listeners and one connection's loop (RFC 9051 2.2, 5.4, 6.2.1, 6.3.13).

IMAP_PORT (143) speaks plaintext until STARTTLS; IMAPS_PORT (993) is TLS
from the first byte (RFC 8314). The listeners, the connection caps, the line
and literal reads with their deadlines, the STARTTLS upgrade and the
lingering close are the ones POP3 and ManageSieve use (mta/access/listener.py);
this module is IMAP's loop over them. The certificate is submission's
(mta/submission/tls.py). LOGIN and AUTHENTICATE are offered only over TLS,
or from the loopback when SUBMISSION_PLAINTEXT_LOOPBACK is on (development),
as submission does; elsewhere CAPABILITY says LOGINDISABLED.

Limits, each a setting (docs/mail.md, "IMAP"): connections per process and
per client address (``* BYE`` past either), a line of IMAP_MAX_LINE bytes,
literals of APPENDLIMIT (the message size limit; 8 KiB before login), a
literal that stops arriving (IMAP_LITERAL_TIMEOUT; one over 256 KiB waits in
an unlinked temporary file while it arrives, so a slow upload of a large
message costs a file, not its size in memory), IMAP_LOGIN_TIMEOUT
before login and IMAP_IDLE_TIMEOUT (30 minutes, RFC 9051 5.4) after, and
BAD answers: past IMAP_SOFT_ERROR_LIMIT each waits SMTP_ERROR_SLEEP, at
IMAP_HARD_ERROR_LIMIT the connection is closed.

IDLE is woken by the notification hub (``mta_changes``, one LISTEN per
process, mta/jmap/push.py's channel): mail delivered over SMTP in another
process is announced within the notify round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime

from mta.access import listener as access
from mta.access.listener import Closed, ErrorCount, LineTooLong, Port, is_loopback
from mta.context import MtaContext
from mta.imap import commands, store
from mta.imap.auth import Authenticator
from mta.imap.parser import (
    Command,
    ParseError,
    literal_announced,
    parse_head,
    strip_literal,
)
from mta.imap.responses import flags_of
from mta.imap.session import AUTHENTICATED, LOGOUT, NOT_AUTHENTICATED, SELECTED, Session
from mta.jmap.email.context import EmailContext
from mta.smtp.limits import ConnectionLimits, ErrorLimits
from mta.store import imap_cache, imap_uids
from mta.submission import server as submission
from mta.submission import tls

log = logging.getLogger(__name__)

CHANNEL = "mta_changes"
PRE_AUTH_LITERAL = 8 * 1024
TLS_HANDSHAKE_TIMEOUT = 30.0
# While idling, the mailbox is also looked at this often (a missed notification).
IDLE_POLL_SECONDS = 60.0
REFUSAL = b"* BYE [UNAVAILABLE] too many connections; try again later\r\n"


class WrongState(Exception):
    pass


class Closing(Exception):
    """The connection ends (BYE sent or the client went away)."""


class Listener:
    """What every connection of one process shares."""

    def __init__(self, ctx: MtaContext, tls_context: ssl.SSLContext) -> None:
        self.ctx = ctx
        self.tls_context = tls_context
        self.auth = Authenticator(ctx)
        self.email_ctx = EmailContext(raw=ctx.blobs, clock=ctx.runtime.clock)
        self.email_ctx.max_size_upload = ctx.config.max_message_size
        # address id -> connections signed in as it (IDLE wakes them)
        self.watchers: dict[str, set[Connection]] = {}

    def notified(self, payload: str) -> None:
        for conn in self.watchers.get(payload.strip(), ()):
            conn.wake.set()

    def gap(self) -> None:
        for conns in self.watchers.values():
            for conn in conns:
                conn.wake.set()

    async def handle(self, link: access.Connection) -> None:
        """One admitted client, from the greeting to its last answer (the
        shared listener counts it, catches its going away and closes it)."""
        conn = Connection(self, link, Session(ip=link.peer_ip, tls=link.tls))
        try:
            await conn.run()
        except Closing:
            pass
        finally:
            conn.forget()
            with contextlib.suppress(Exception):
                await conn.cache_written()


class Connection:
    def __init__(self, listener: Listener, link: access.Connection, session: Session) -> None:
        self.listener = listener
        self.ctx = listener.ctx
        self.db = listener.ctx.runtime.db
        self.auth = listener.auth
        self.email_ctx = listener.email_ctx
        self.link = link
        self.session = session
        self.wake = asyncio.Event()
        self._out = bytearray()
        self._tls_after: str | None = None
        self._compress_after = False
        self._caching: asyncio.Task[None] | None = None
        config = self.ctx.config
        self.tls_context: ssl.SSLContext | None = None if session.tls else listener.tls_context
        self.loopback_ok = config.submission_plaintext_loopback and is_loopback(session.ip)
        # BADs (and failed logins): past the soft limit each waits, at the hard one BYE.
        self.errors = ErrorCount(
            ErrorLimits(
                config.imap_soft_error_limit, config.imap_hard_error_limit, config.smtp_error_sleep
            )
        )

    # -- what handlers use -----------------------------------------------------

    @property
    def may_login(self) -> bool:
        return self.session.tls or self.loopback_ok

    def now(self) -> datetime:
        return self.ctx.runtime.clock.now()

    def send(self, data: bytes) -> None:
        # Gathered and written once per flush: a write per response line cost
        # more than building the line (a FETCH of 100,000 is 100,000 lines).
        self._out += data

    def untagged(self, text: str) -> None:
        self._out += b"* " + text.encode("utf-8") + b"\r\n"

    async def flush(self) -> None:
        if self._out:
            self.link.write(bytes(self._out))
            self._out.clear()
        await self.link.drain()

    def cache_later(self, rendered: imap_cache.Rendered) -> None:
        """Write what a FETCH batch rendered while the session goes on (the next
        batch, the client reading the response); :meth:`cache_written` waits."""
        if rendered:
            self._caching = asyncio.create_task(self._keep(rendered))

    async def _keep(self, rendered: imap_cache.Rendered) -> None:
        async with self.db.connection() as conn:
            await imap_cache.keep(conn, rendered)

    async def cache_written(self) -> None:
        """Wait for the session's cache write in flight, if any: one at a time, and
        done before the session's next command runs (or it closes)."""
        task, self._caching = self._caching, None
        if task is not None:
            try:
                await task
            except Exception:
                # The cache is an optimisation: a failed write renders again next time.
                log.warning("IMAP cache write failed", exc_info=True)

    def require(self, *states: str) -> None:
        if self.session.state not in states:
            if self.session.state == NOT_AUTHENTICATED:
                raise WrongState("log in first")
            raise WrongState(f"not allowed in the {self.session.state} state")

    def start_tls_after(self, tag: str) -> None:
        self._tls_after = tag

    def compress_after(self) -> None:
        self._compress_after = True

    def signed_in(self) -> None:
        self.listener.watchers.setdefault(self.session.address_id, set()).add(self)

    def forget(self) -> None:
        if self.session.principal is not None:
            conns = self.listener.watchers.get(self.session.address_id)
            if conns is not None:
                conns.discard(self)
                if not conns:
                    del self.listener.watchers[self.session.address_id]

    async def slow_down(self) -> None:
        """After a failed login: the error delay (an attacker's guesses cost time)."""
        self.errors.count += 1
        await asyncio.sleep(self.ctx.config.smtp_error_sleep)

    async def read_continuation(self) -> str | None:
        line = await self._line(self._timeout())
        if line is None:
            return None
        return line.rstrip(b"\r\n").decode("utf-8", "replace")

    # -- reading ---------------------------------------------------------------

    def _timeout(self) -> float:
        config = self.ctx.config
        if self.session.state == NOT_AUTHENTICATED:
            return float(config.imap_login_timeout)
        return float(config.imap_idle_timeout)

    async def _line(self, seconds: float) -> bytes | None:
        """The next line (without its CRLF); None when the client went away."""
        await self.flush()
        try:
            return await self.link.readline(seconds)
        except Closed as exc:
            if not exc.timed_out:
                return None
            await self._bye("BYE [UNAVAILABLE] autologout; idle for too long")
        except LineTooLong:
            await self._bye("BYE [TOOBIG] line too long")
        raise Closing

    async def _bye(self, text: str) -> None:
        """Say why the connection ends; the shared listener then closes it,
        lingering so the client reads this before the reset."""
        self.untagged(text)
        with contextlib.suppress(Exception):
            await self.flush()

    def _literal_limit(self) -> int:
        if self.session.state == NOT_AUTHENTICATED:
            return PRE_AUTH_LITERAL
        return self.ctx.config.max_message_size

    async def read_command(self) -> Command | str | None:
        """The next command; a tagged refusal already sent (str: the tag); None at EOF."""
        cmd = Command()
        limit = self._literal_limit()
        while True:
            body = await self._line(self._timeout())
            if body is None:
                return None
            announced = literal_announced(body)
            if announced is None:
                cmd.data += body
                return cmd
            size, nonsync, _ = announced
            cmd.data += strip_literal(body)
            if size > limit or len(cmd.data) + size > limit + self.ctx.config.imap_max_line:
                if nonsync:
                    await self._bye("BYE [TOOBIG] literal too large")
                    raise Closing
                tag = bytes(cmd.data).split(b" ", 1)[0].decode("utf-8", "replace") or "*"
                self.send(f"{tag} NO [TOOBIG] literal too large\r\n".encode())
                return tag
            if not nonsync:
                self.send(b"+ Ready for literal data\r\n")
                await self.flush()
            try:
                data = await self.link.read_exactly(size, self.ctx.config.imap_literal_timeout)
            except Closed as exc:
                if exc.timed_out:
                    await self._bye("BYE [UNAVAILABLE] the literal did not arrive in time")
                raise Closing from None
            cmd.add_literal(data)

    # -- the loop --------------------------------------------------------------

    async def run(self) -> None:
        self.untagged(f"OK [CAPABILITY {commands.capabilities(self)}] IMAP server ready")
        await self.flush()
        while self.session.state != LOGOUT:
            cmd = await self.read_command()
            if cmd is None:
                return
            if isinstance(cmd, str):
                continue
            await self.cache_written()
            tag, reply = await self._dispatch(cmd)
            if reply.startswith("BAD") and await self.errors.error():
                await self._bye("BYE too many errors")
                return
            self.send(f"{tag} {reply}\r\n".encode())
            await self.flush()
            if self._tls_after is not None:
                self._tls_after = None
                await self._start_tls()
            if self._compress_after:
                self._compress_after = False
                self.link.compress()

    async def _dispatch(self, cmd: Command) -> tuple[str, str]:
        raw = bytes(cmd.data)
        text_only = bytearray(raw)
        for start, length in cmd.literals.items():
            text_only[start : start + length] = b"x" * length
        try:
            if b"\x00" in text_only:
                tag = raw.split(b" ", 1)[0].decode("ascii", "replace")
                return (
                    tag if tag and b"\x00" not in tag.encode() else "*"
                ), "BAD NUL in the command"
            tag, name, toks = parse_head(cmd)
        except ParseError as exc:
            tag = raw.split(b" ", 1)[0].decode("ascii", "replace")
            return (tag if tag.isprintable() and tag else "*"), f"BAD {exc}"
        handler = commands.COMMANDS.get(name)
        if handler is None:
            return tag, "BAD unknown command"
        try:
            return tag, await handler(self, tag, toks, False)
        except ParseError as exc:
            return tag, f"BAD {exc}"
        except WrongState as exc:
            return tag, f"BAD {exc}"
        except store.Refused as exc:
            code = f"[{exc.code}] " if exc.code else ""
            return tag, f"NO {code}{exc}"
        except (Closing, Closed, ConnectionError):
            raise
        except Exception:
            log.exception("IMAP %s failed", name)
            return tag, "NO [SERVERBUG] the command failed; try again"

    async def _start_tls(self) -> None:
        if self.link.pipelined():
            # Bytes sent after STARTTLS before the handshake: an injection attempt.
            raise Closing
        assert self.tls_context is not None
        await self.link.starttls(self.tls_context, TLS_HANDSHAKE_TIMEOUT)
        self.session.tls = True
        self.tls_context = None

    # -- mailbox updates -------------------------------------------------------

    async def catch_up(self) -> None:
        """Tell the client what changed in its selected mailbox (EXISTS, EXPUNGE, FETCH)."""
        sel = self.session.selected
        if sel is None or self.session.state != SELECTED:
            return
        async with self.db.connection() as conn:
            d = await store.delta(conn, self.session.address_id, sel.view)
            commands._announce_expunged(self, sel, d.expunged)
            index = {e: i for i, e in enumerate(sel.view.email_ids)}
            changed = [e for e in d.changed if e in index]
            if changed:
                rows = await imap_uids.message_rows(
                    conn, self.session.address_id, changed[:1000], columns=False
                )
                for e, row in rows.items():
                    seq = index[e] + 1
                    flags = flags_of(row.keywords)
                    if sel.stored.get(e) == flags:
                        continue  # the client set these itself and was told
                    items = [f"UID {sel.view.uids[seq - 1]}", f"FLAGS {flags}"]
                    if self.session.condstore:
                        items.append(f"MODSEQ ({d.changed[e]})")
                    self.untagged(f"{seq} FETCH ({' '.join(items)})")
            if d.added:
                for uid, email_id in d.added:
                    if uid not in sel.view.uids[-1:]:
                        sel.view.uids.append(uid)
                        sel.view.email_ids.append(email_id)
                self.untagged(f"{len(sel.view.uids)} EXISTS")
            sel.view.uid_next = d.uid_next
            sel.view.modseq = d.modseq
            sel.stored.clear()

    async def idle(self) -> str:
        self.send(b"+ idling\r\n")
        await self.flush()
        reading = asyncio.ensure_future(self._line(float(self.ctx.config.imap_idle_timeout)))
        try:
            while True:
                self.wake.clear()
                await self.catch_up()
                await self.flush()
                woken = asyncio.ensure_future(self.wake.wait())
                done, _ = await asyncio.wait(
                    {reading, woken}, timeout=IDLE_POLL_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
                woken.cancel()
                if reading in done:
                    line = reading.result()
                    if line is None:
                        raise Closing
                    if line.strip().upper() == b"DONE":
                        return "OK IDLE terminated"
                    return "BAD expected DONE"
        finally:
            if not reading.done():
                reading.cancel()


def bound_ports(servers: list[asyncio.Server]) -> list[int]:
    return [s.sockets[0].getsockname()[1] for s in servers]


@asynccontextmanager
async def serve(ctx: MtaContext) -> AsyncIterator[list[asyncio.Server]]:
    """Listen on IMAP_PORT (STARTTLS) and IMAPS_PORT (implicit TLS); either may be off."""
    config = ctx.config
    context = tls.server_context(*submission.certificate(ctx))
    listener = Listener(ctx, context)
    hub = ctx.runtime.notifications
    async with hub.running():
        subscription = hub.subscribe(CHANNEL, listener.notified, on_gap=listener.gap)
        try:
            async with access.serve(
                "imap",
                listener.handle,
                host=config.imap_host,
                ports=[Port(config.imap_port, False), Port(config.imaps_port, True)],
                context=context,
                limits=ConnectionLimits(
                    config.imap_max_connections, config.imap_max_connections_per_ip
                ),
                refusal=REFUSAL,
                max_line=config.imap_max_line,
                reuse_port=config.smtp_reuse_port,
                production=ctx.runtime.settings.is_production,
            ) as servers:
                yield servers
        finally:
            subscription.close()


__all__ = ["AUTHENTICATED", "Connection", "Listener", "bound_ports", "serve"]
