"""Listeners and connections of the mailbox-access daemons (IMAP, POP3, ManageSieve).

A connection over the daemon's cap per process or per client address
(IMAP_MAX_CONNECTIONS(_PER_IP) for IMAP, MAIL_ACCESS_MAX_CONNECTIONS(_PER_IP)
for POP3 and ManageSieve) gets the daemon's refusal line and is closed before any other byte is read (Dovecot's
``process_limit`` and ``mail_max_userip_connections`` answer the same
question). Every read has a deadline (:meth:`Connection.readline`) and a
length limit (the stream's buffer never holds more than ``max_line`` bytes),
so an idle or endless client costs one small buffer until its deadline; a
literal over SPOOL_LITERAL bytes arrives into an unlinked temporary file (a
thousand slow uploads of large messages hold disk, not memory).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import ssl
import tempfile
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

from mta.smtp.limits import ConnectionLimits, ErrorLimits

log = logging.getLogger(__name__)


class Closed(Exception):
    """The client went away, or stayed silent past its deadline (``timed_out``)."""

    def __init__(self, timed_out: bool = False) -> None:
        super().__init__("timed out" if timed_out else "closed")
        self.timed_out = timed_out


# Seconds a closing connection keeps reading what the client still sends.
LINGER_SECONDS = 2.0
# Literals larger than this are spooled to disk until their last byte is in.
SPOOL_LITERAL = 256 * 1024
SPOOL_CHUNK = 64 * 1024
# COMPRESS=DEFLATE: inflated bytes per step, and the level of what is sent
# (zlib's default, Dovecot's too).
INFLATE_CHUNK = 64 * 1024
DEFLATE_LEVEL = 6


async def lingering_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Close after a lingering read when the transport can half-close.

    Bytes the client sent that were never read (the rest of a line too
    long, commands after the last answer) make the kernel answer our close
    with a reset, which can discard that last answer before the client
    reads it. So: FIN first, then read and drop what still comes, briefly
    (the lingering close of RFC 9112 9.6). Every mail-access daemon closes
    this way (IMAP too)."""
    if not writer.is_closing() and writer.can_write_eof():
        with contextlib.suppress(Exception):
            async with asyncio.timeout(LINGER_SECONDS):
                await writer.drain()
                writer.write_eof()
                while await reader.read(65536):
                    pass
    writer.close()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(writer.wait_closed(), 5.0)


class Inflating:
    """The client's half of a COMPRESS=DEFLATE connection (RFC 4978): raw
    deflate (RFC 1951) inflated as it is read, with the reads the
    connection makes (a line, exactly n bytes, up to n bytes).

    Inflated only on demand and at most INFLATE_CHUNK bytes per step (the
    rest stays in zlib's unconsumed tail), so a small compressed stream that
    inflates to gigabytes costs no more memory than the plain reads' own
    limits: a line is refused past ``limit`` bytes, as the plain reader does.
    """

    def __init__(self, raw: asyncio.StreamReader, pending: bytes, limit: int) -> None:
        self.raw = raw
        self.limit = limit
        self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        self._input = pending
        self._buffer = bytearray()

    async def _more(self) -> bool:
        """Inflate another chunk into the buffer; False at the end of the stream."""
        while True:
            data = self._inflater.unconsumed_tail or self._input
            self._input = b""
            if not data:
                data = await self.raw.read(SPOOL_CHUNK)
                if not data:
                    return False
            try:
                out = self._inflater.decompress(data, INFLATE_CHUNK)
            except zlib.error as exc:
                raise ConnectionResetError(f"bad deflate stream: {exc}") from None
            if out:
                self._buffer += out
                return True

    async def readuntil(self, separator: bytes = b"\n") -> bytes:
        start = 0
        while True:
            found = self._buffer.find(separator, start)
            if found >= 0:
                end = found + len(separator)
                line = bytes(self._buffer[:end])
                del self._buffer[:end]
                return line
            if len(self._buffer) > self.limit:
                raise asyncio.LimitOverrunError("separator is not found", len(self._buffer))
            start = max(0, len(self._buffer) - len(separator) + 1)
            if not await self._more():
                partial = bytes(self._buffer)
                self._buffer.clear()
                raise asyncio.IncompleteReadError(partial, None)

    async def readexactly(self, count: int) -> bytes:
        while len(self._buffer) < count:
            if not await self._more():
                partial = bytes(self._buffer)
                self._buffer.clear()
                raise asyncio.IncompleteReadError(partial, count)
        data = bytes(self._buffer[:count])
        del self._buffer[:count]
        return data

    async def read(self, count: int) -> bytes:
        if not self._buffer and not await self._more():
            return b""
        data = bytes(self._buffer[:count])
        del self._buffer[:count]
        return data


class LineTooLong(Exception):
    """A line longer than the daemon's limit: answered, then the connection is closed."""


def is_loopback(ip: str) -> bool:
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


class Connection:
    """One client: line reads with a limit and a deadline, writes, STARTTLS."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        tls: bool,
        max_line: int,
    ) -> None:
        self.reader: asyncio.StreamReader | Inflating = reader
        self.writer = writer
        self._raw_reader = reader
        self._deflater: zlib._Compress | None = None
        self.tls = tls
        self.max_line = max_line
        peer = writer.get_extra_info("peername")
        self.peer_ip = str(peer[0]) if isinstance(peer, tuple) and peer else ""

    async def readline(self, within: float) -> bytes:
        """The next line without its CRLF (or bare LF)."""
        try:
            line = await asyncio.wait_for(self.reader.readuntil(b"\n"), within)
        except TimeoutError:
            raise Closed(timed_out=True) from None
        except asyncio.LimitOverrunError:
            raise LineTooLong from None
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            raise Closed from None
        if len(line) > self.max_line:
            raise LineTooLong
        return line.rstrip(b"\r\n")

    async def read_exactly(self, count: int, within: float) -> bytes:
        """``count`` bytes (a literal): all within ``within`` seconds, or :class:`Closed`."""
        try:
            async with asyncio.timeout(within):
                if count <= SPOOL_LITERAL:
                    return await self.reader.readexactly(count)
                return await self._spooled(count)
        except TimeoutError:
            raise Closed(timed_out=True) from None
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            raise Closed from None

    async def _spooled(self, count: int) -> bytes:
        """A large literal arrives into a temporary file and is read back whole
        only once complete: memory holds it only when it is all there."""
        with tempfile.TemporaryFile() as spool:
            left = count
            while left:
                chunk = await self.reader.read(min(left, SPOOL_CHUNK))
                if not chunk:
                    raise asyncio.IncompleteReadError(b"", left)
                spool.write(chunk)
                left -= len(chunk)
            spool.seek(0)
            return spool.read()

    def write(self, data: bytes) -> None:
        if not self.writer.is_closing():
            if self._deflater is not None:
                # A sync flush per write: the client can read all of it now
                # (every caller writes a whole response batch at once).
                data = self._deflater.compress(data) + self._deflater.flush(zlib.Z_SYNC_FLUSH)
            self.writer.write(data)

    @property
    def compressed(self) -> bool:
        return self._deflater is not None

    def compress(self) -> None:
        """Deflate both ways from here on (RFC 4978 COMPRESS=DEFLATE), right
        after the go-ahead was written uncompressed. Bytes already buffered
        after the command were sent compressed: they are inflated first."""
        raw = self._raw_reader
        buffered = getattr(raw, "_buffer", bytearray())
        pending = bytes(buffered)
        buffered.clear()
        limit = int(getattr(raw, "_limit", self.max_line))
        self.reader = Inflating(raw, pending, limit)
        self._deflater = zlib.compressobj(DEFLATE_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)

    async def drain(self) -> None:
        try:
            await self.writer.drain()
        except ConnectionError:
            raise Closed from None

    def pipelined(self) -> bool:
        """Whether bytes after the current command are already buffered.

        asyncio's StreamReader keeps them in ``_buffer``: read before STARTTLS
        they would be taken as sent under TLS (the STARTTLS command injection
        of CVE-2011-0411), so a client that sent any is dropped instead."""
        return bool(getattr(self.reader, "_buffer", b""))

    async def starttls(self, context: ssl.SSLContext, within: float) -> None:
        """The TLS handshake, right after the go-ahead was written.

        Awaited in this task (``asyncio.timeout``, not ``wait_for``'s new task):
        ``loop.start_tls`` pauses reading before it yields, so the client's
        ClientHello, sent as soon as it reads the go-ahead, cannot land in the
        plaintext reader's buffer first and leave the handshake waiting."""
        try:
            async with asyncio.timeout(within):
                await self.writer.start_tls(context)
        except (TimeoutError, ssl.SSLError, ConnectionError, OSError):
            raise Closed from None
        self.tls = True

    async def close(self) -> None:
        await lingering_close(self._raw_reader, self.writer)


class ErrorCount:
    """A session's errors: past ``soft`` each answer waits, at ``hard`` it ends."""

    def __init__(self, limits: ErrorLimits) -> None:
        self.limits = limits
        self.count = 0

    async def error(self) -> bool:
        """Count one error; True when the session must end now."""
        self.count += 1
        if self.count >= self.limits.hard:
            return True
        if self.count > self.limits.soft and self.limits.sleep > 0:
            await asyncio.sleep(self.limits.sleep)
        return False


@dataclass(frozen=True)
class Port:
    port: int | None
    implicit_tls: bool


Handler = Callable[[Connection], Awaitable[None]]


@asynccontextmanager
async def serve(
    name: str,
    handle: Handler,
    *,
    host: str,
    ports: Sequence[Port],
    context: ssl.SSLContext,
    limits: ConnectionLimits,
    refusal: bytes,
    max_line: int,
    reuse_port: bool = False,
    production: bool = False,
) -> AsyncIterator[list[asyncio.Server]]:
    """Listen on each port that is not off; the handlers are cancelled on the way out."""
    loop = asyncio.get_running_loop()
    tasks: set[asyncio.Task[None]] = set()

    def connected(implicit: bool) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], None]:
        def start(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = loop.create_task(_session(reader, writer, implicit))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

        return start

    async def _session(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, implicit: bool
    ) -> None:
        conn = Connection(reader, writer, tls=implicit, max_line=max_line)
        ip = conn.peer_ip
        if not limits.admit(ip):
            conn.write(refusal)
            await conn.close()
            return
        try:
            await handle(conn)
        except (Closed, ConnectionError, ssl.SSLError):
            pass
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s: session failed", name)
        finally:
            limits.release(ip)
            await conn.close()

    servers: list[asyncio.Server] = []
    try:
        for spec in ports:
            if spec.port is None:
                continue
            try:
                servers.append(
                    await asyncio.start_server(
                        connected(spec.implicit_tls),
                        host=host,
                        port=spec.port,
                        ssl=context if spec.implicit_tls else None,
                        limit=max_line,
                        reuse_port=reuse_port,
                    )
                )
            except PermissionError:
                if production:
                    raise
                # 143, 993, 110 and 995 need privileges a development run lacks.
                log.warning(
                    "%s: no permission to listen on port %s; set its port setting above 1023",
                    name,
                    spec.port,
                )
        for srv in servers:
            log.info("%s listening on %s", name, srv.sockets[0].getsockname())
        yield servers
    finally:
        for srv in servers:
            srv.close()
        for task in list(tasks):
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for srv in servers:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(srv.wait_closed(), 5.0)
