"""aiosmtpd's SMTP with its three per-message hot spots rewritten, same replies and results.

A profile of aiosmtpd 1.4.6 receiving 10 KB messages showed most of its CPU in
three places, each replaced here without changing what a client or a handler sees:

* ``smtp_DATA`` awaited ``readuntil(b"\\r\\n")`` and did bookkeeping per line. Here
  the data is read in large chunks and the end (``CRLF.CRLF``) found with one
  ``bytes.find``; the per-line rules (line length, size limit, which one wins)
  are only walked line by line when a message is over the size limit.
* ``_getaddr`` declared a ``typing.Protocol`` class on every call and ran the
  generic RFC 5322 parser of the email package. Here a regular expression takes
  ``<dot-atom@dot-atom-or-literal>`` and ``<>``; anything else still goes to
  aiosmtpd's parser (tests/mta/test_smtp_protocol_address.py holds both to the
  same answers).
* ``SMTP.__init__`` ran ``inspect.getmembers`` / ``dir`` over the protocol and the
  handler and ``inspect.signature`` on every connection. ``protocol_factory``
  builds one instance the normal way and gives each connection a copy of its
  attributes, methods rebound (tests/mta/test_smtp_protocol_factory.py compares
  the copy with a normally built instance).

And two bounds aiosmtpd lacks, which keep a slow or stalled client from holding
memory or a connection: DATA past 64 KiB is spooled to a temporary file, and
the whole DATA has one deadline (``data_timeout``) that arriving bytes do not move.
"""

from __future__ import annotations

import asyncio
import collections
import copy
import logging
import re
import sys
import tempfile
from collections.abc import Callable
from enum import Enum
from typing import IO, Any, TypeVar

from aiosmtpd.smtp import MISSING, SMTP, syntax

log = logging.getLogger("mail.log")

# RFC 5321 4.1.1.4: the data ends with a line holding one dot. The data is kept
# behind a CRLF of our own so that a first line "." (an empty message) is found
# by the same search as every later one.
END_OF_DATA = b"\r\n.\r\n"
_LEAD = b"\r\n"
# read(n) returns at most what the StreamReader holds, so asking for everything
# leaves it empty; bytes read past the end of the data can then be handed back
# with feed_data() and come out first, in order, for the next command.
_EVERYTHING = sys.maxsize


class DataState(Enum):
    NOMINAL = "nominal"
    TOO_LONG = "too long"  # a line over line_length_limit: 500
    TOO_MUCH = "too much"  # more than data_size_limit: 552


def check_lines(
    data: bytes | bytearray, pos: int, stop: int, size: int, size_limit: int | None, line_limit: int
) -> tuple[DataState, int, int]:
    """aiosmtpd's per-line rules over the complete lines of ``data[pos:stop]``, in order.

    Returns the state, the bytes counted so far and where the next line starts.
    aiosmtpd reads with ``readuntil(b"\\r\\n")`` under a StreamReader limit of
    ``line_limit``: a line whose text (CRLF excluded) is longer than that limit
    overruns the reader and is marked too long before its bytes are counted;
    any other line is counted first (over the size limit: too much) and then
    marked too long if it is longer than ``line_limit`` with its CRLF. The first
    rule to fire decides the reply.
    """
    while True:
        eol = data.find(b"\r\n", pos, stop)
        if eol < 0:
            return DataState.NOMINAL, size, pos
        length = eol + 2 - pos
        pos = eol + 2
        if length - 2 > line_limit:
            return DataState.TOO_LONG, size, pos
        size += length
        if size_limit and size > size_limit:
            return DataState.TOO_MUCH, size, pos
        if length > line_limit:
            return DataState.TOO_LONG, size, pos


def has_long_line(data: bytes, line_limit: int) -> bool:
    """Whether a CRLF-ended line of ``data`` is longer than ``line_limit`` with its CRLF."""
    if len(data) <= line_limit:
        return False
    return max(map(len, data.split(b"\r\n"))) > line_limit - 2


def unstuff(data: bytes) -> bytes:
    """RFC 5321 4.5.2: drop the leading dot of every line that starts with one."""
    if data[:1] == b".":
        data = data[1:]
    if b"\r\n." in data:
        data = data.replace(b"\r\n.", b"\r\n")
    return data


# <local@domain> with a dot-atom local part and a dot-atom or address-literal
# domain: for these the email package's parser returns the text as it is.
# Printable ASCII atext (RFC 5322 3.2.3) and any non-ASCII character (SMTPUTF8);
# ASCII controls, whitespace, quotes, comments and obsolete forms go to aiosmtpd.
_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-\u0080-\U0010ffff]"
_DOT_ATOM = rf"{_ATEXT}+(?:\.{_ATEXT}+)*"
_ANGLE_ADDR = re.compile(rf"<({_DOT_ATOM}@(?:{_DOT_ATOM}|\[[A-Za-z0-9.:\-]+\]))>")


class SMTPProtocol(SMTP):
    """aiosmtpd's SMTP with a bulk DATA reader and a fast path for plain addresses.

    Two bounds aiosmtpd does not have: the data of an unfinished DATA is kept in
    memory only up to ``spool_threshold`` bytes, the rest goes to an anonymous
    temporary file (so a client that sends 20 MB and then stops costs 64 KiB of
    memory, not 20 MB, and nothing once it is gone); and ``data_timeout``, when
    set, bounds the whole DATA phase, from the 354 to the final dot, however
    slowly the bytes arrive. aiosmtpd's ``timeout`` bounds each command, counted
    from the previous one, as before.
    """

    # Bytes of data held in memory before the complete lines go to the spool file.
    # 10 KB messages (most mail) never touch it.
    spool_threshold = 64 * 1024

    def __init__(self, *args: Any, data_timeout: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.data_timeout = data_timeout

    def _timeout_cb(self) -> None:
        # RFC 5321 4.5.3.2 lets the server close a connection that passed its
        # timeout; saying why first (as Postfix does) tells the client's log.
        if self.transport is not None and not self.transport.is_closing():
            self._writer.write(f"421 4.4.2 {self.hostname} Error: timeout exceeded\r\n".encode())
        super()._timeout_cb()

    def _getaddr(self, arg: str) -> tuple[str | None, str | None]:
        if not arg:
            return "", ""
        if arg.startswith("<>"):
            # The email parser accepts an empty angle-addr (SMTP's null sender)
            # and returns what follows it untouched.
            return "<>", arg[2:]
        match = _ANGLE_ADDR.match(arg)
        if match is None:
            return super()._getaddr(arg)
        address = match.group(1)
        # Unicode whitespace is dropped from domains by the parser, and "=?"
        # starts an RFC 2047 encoded word there: let it decide those.
        if (not address.isascii() and any(c.isspace() for c in address)) or "=?" in address:
            return super()._getaddr(arg)
        rest = arg[match.end() :]
        if rest and rest[0] in " \t(":
            # The parser eats folding whitespace (str.lstrip) and comments after '>'.
            if rest[0] == "(":
                return super()._getaddr(arg)
            rest = rest.lstrip()
            if rest.startswith("("):
                return super()._getaddr(arg)
        if self.local_part_limit and len(address.rpartition("@")[0]) > self.local_part_limit:
            return None, None
        return address, rest

    @syntax("DATA")
    async def smtp_DATA(self, arg: str) -> None:
        # The checks and replies before 354 are aiosmtpd's, in its order.
        if await self.check_helo_needed():
            return
        if await self.check_auth_needed("DATA"):
            return
        assert self.envelope is not None
        if not self.envelope.rcpt_tos:
            await self.push("503 Error: need RCPT command")
            return
        if arg:
            await self.push("501 Syntax: DATA")
            return
        await self.push("354 End data with <CR><LF>.<CR><LF>")
        if self.data_timeout:
            # One deadline for the whole data, which bytes arriving do not move.
            self._reset_timeout(self.data_timeout)
        try:
            state, original_content = await self._read_data()
        except asyncio.CancelledError:
            # The connection went away during DATA: nothing reaches the handler.
            log.info("Connection lost during DATA")
            self._writer.close()
            raise
        # Storing the message is ours to wait for, not the client's: the next
        # command's deadline starts now.
        self._reset_timeout()
        if state is DataState.TOO_LONG:
            await self.push("500 Line too long (see RFC5321 4.5.3.1.6)")
            self._set_post_data_state()
            return
        if state is DataState.TOO_MUCH:
            await self.push("552 Error: Too much mail data")
            self._set_post_data_state()
            return
        content: str | bytes = original_content
        if self._decode_data:
            if self.enable_SMTPUTF8:
                content = original_content.decode("utf-8", errors="surrogateescape")
            else:
                try:
                    content = original_content.decode("ascii", errors="strict")
                except UnicodeDecodeError:
                    await self.push("500 Error: strict ASCII mode")
                    return
        self.envelope.content = content
        self.envelope.original_content = original_content
        # aiosmtpd's deprecated process_message() fallback is not kept: our
        # handlers implement handle_DATA, and without one the reply is 250 OK.
        status = await self._call_handler_hook("DATA")
        self._set_post_data_state()
        await self.push("250 OK" if status is MISSING else status)

    async def _read_data(self) -> tuple[DataState, bytes]:
        """Read up to and including the end of data; returns the state and the unstuffed data.

        ``buf`` holds a CRLF (our own at the start, then the end of the line
        before) and the data not yet spooled, so the end is always found by one
        search. Past ``spool_threshold`` bytes its complete lines go to the spool
        and only the unfinished last line stays in memory.
        """
        limit = self.data_size_limit
        line_limit = self.line_length_limit
        buf = bytearray(_LEAD)
        search_from = 0
        # Lines before `checked` went through check_lines with `size` bytes counted.
        # That only happens once the data passes the size limit, to know which
        # reply aiosmtpd would give and to stop keeping what will be refused.
        checked, size = len(_LEAD), 0
        with Spool() as spool:
            while True:
                buf += await self._read_chunk()
                end = buf.find(END_OF_DATA, search_from)
                if end >= 0:
                    break
                search_from = len(buf) - len(END_OF_DATA) + 1
                state = DataState.NOMINAL
                if limit and spool.size + len(buf) - len(_LEAD) > limit:
                    state, size, checked = check_lines(
                        buf, checked, len(buf), size, limit, line_limit
                    )
                    unfinished = len(buf) - checked
                elif len(buf) > self.spool_threshold:
                    state, moved = self._spill(buf, spool)
                    search_from = max(0, search_from - moved)
                    checked, size = len(_LEAD), spool.size
                    unfinished = len(buf) - len(_LEAD)
                else:
                    continue
                if state is DataState.NOMINAL and unfinished > line_limit + 1:
                    # An unfinished line already too long to fit under the limit.
                    state = DataState.TOO_LONG
                if state is not DataState.NOMINAL:
                    await self._discard_data(bytes(buf[-(len(END_OF_DATA) - 1) :]))
                    return state, b""
            data_end = end + len(_LEAD)  # the data keeps the CRLF ending its last line
            self._unread(buf[end + len(END_OF_DATA) :])
            if limit and spool.size + data_end - len(_LEAD) > limit:
                state, _, _ = check_lines(buf, checked, data_end, size, limit, line_limit)
                return state, b""
            data = bytes(memoryview(buf)[len(_LEAD) : data_end])
            if has_long_line(data, line_limit):
                return DataState.TOO_LONG, b""
            if not spool.size:
                return DataState.NOMINAL, unstuff(data)
            spool.write(unstuff(data), len(data))
            return DataState.NOMINAL, spool.read_all()  # one copy of the whole, from the file

    def _spill(self, buf: bytearray, spool: Spool) -> tuple[DataState, int]:
        """Move the complete lines of ``buf`` (under the size limit) to ``spool``.

        Returns the state (TOO_LONG or TOO_MUCH when a line among them decides
        the reply, as check_lines would) and how many bytes left ``buf``.
        """
        cut = buf.rfind(b"\r\n")  # the end of the last complete line
        if cut <= 0:
            return DataState.NOMINAL, 0
        lines = bytes(memoryview(buf)[len(_LEAD) : cut + 2])
        if has_long_line(lines, self.line_length_limit):
            # Refused whatever follows; the lines up to here decide which reply.
            state, _, _ = check_lines(
                buf, len(_LEAD), cut + 2, spool.size, self.data_size_limit, self.line_length_limit
            )
            return state, 0
        spool.write(unstuff(lines), len(lines))
        del buf[:cut]  # its CRLF stays in front of the next line
        return DataState.NOMINAL, cut

    async def _discard_data(self, tail: bytes) -> None:
        """Read and drop the rest of a refused message, up to and including its end."""
        while True:
            window = tail + await self._read_chunk()
            end = window.find(END_OF_DATA)
            if end >= 0:
                self._unread(window[end + len(END_OF_DATA) :])
                return
            tail = window[-(len(END_OF_DATA) - 1) :]

    async def _read_chunk(self) -> bytes:
        chunk = await self._reader.read(_EVERYTHING)
        if not chunk:
            # End of stream. aiosmtpd's eof_received() cancels this task before
            # the reader reports it, so this is a lost connection like that one.
            raise asyncio.CancelledError
        return chunk

    def _unread(self, surplus: bytes | bytearray) -> None:
        # A pipelining client may send its next command right behind the dot. The
        # reader is empty here (see _EVERYTHING) and nothing ran since the read,
        # so feeding the surplus back puts it first for _handle_client's readuntil.
        if surplus and not self._reader.at_eof():
            self._reader.feed_data(bytes(surplus))


class Spool:
    """Data lines kept out of memory: an anonymous temporary file, made at the first write.

    Writes are blocking, of 64 KiB or so, to the page cache: cheaper than a hop
    to a thread, and only large messages make them. The file has no name, so it
    is gone with the connection whatever happens to the process.
    """

    def __init__(self) -> None:
        self.size = 0  # bytes of data as sent (stuffed) that the spooled lines were
        self._file: IO[bytes] | None = None

    def write(self, lines: bytes, sent: int) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="smtp-data-")  # noqa: SIM115
        self._file.write(lines)
        self.size += sent

    def read_all(self) -> bytes:
        if self._file is None:
            return b""
        self._file.seek(0)
        return self._file.read()

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


P = TypeVar("P", bound=SMTP)


# Attribute values copied, not shared, into each connection built from the template.
_CONTAINERS = (dict, list, set, bytearray)


def protocol_factory(cls: type[P], handler: Any, **options: Any) -> Callable[[], P]:
    """A protocol factory for ``loop.create_server`` giving ``cls(handler, **options)``.

    ``SMTP.__init__`` looks its handler and itself over (auth mechanisms, hooks,
    smtp_ commands, the EHLO hook's signature) on every connection: 0.3 ms each.
    The answers depend only on the class and the handler, so one instance is
    built the normal way and every connection gets a fresh StreamReaderProtocol
    (reader, writer state, closed future) plus a copy of that instance's other
    attributes, with the methods bound to the template rebound to the new one.
    Containers among those attributes are copied, so no connection's changes
    reach another's.
    """
    loop = options["loop"]
    template = cls(handler, **options)
    stream_attrs = set(
        vars(
            asyncio.StreamReaderProtocol(
                asyncio.StreamReader(loop=loop), client_connected_cb=lambda r, w: None, loop=loop
            )
        )
    )
    smtp_methods = {name: method.__func__ for name, method in template._smtp_methods.items()}
    auth_methods = {
        name: (attr, attr.method.__func__ if attr.is_builtin else None)  # type: ignore[attr-defined]
        for name, attr in template._auth_methods.items()
    }
    shared = {
        name: value
        for name, value in vars(template).items()
        if name not in stream_attrs and name not in ("_smtp_methods", "_auth_methods")
    }
    for name, value in shared.items():
        values = value.values() if isinstance(value, dict) else (value,)
        if any(getattr(v, "__self__", None) is template for v in values):
            raise RuntimeError(f"SMTP attribute {name} holds a method of its instance")
    mutable = [name for name, value in shared.items() if isinstance(value, _CONTAINERS)]

    def build() -> P:
        protocol = cls.__new__(cls)
        # What SMTP.__init__ passes to its superclass.
        asyncio.StreamReaderProtocol.__init__(
            protocol,
            asyncio.StreamReader(loop=loop, limit=cls.line_length_limit),
            client_connected_cb=protocol._cb_client_connected,
            loop=loop,
        )
        protocol.__dict__.update(shared)
        protocol._smtp_methods = {name: f.__get__(protocol) for name, f in smtp_methods.items()}
        protocol._auth_methods = {
            name: attr._replace(method=f.__get__(protocol)) if f is not None else attr
            for name, (attr, f) in auth_methods.items()
        }
        # Containers would otherwise be one object for every connection.
        for name in mutable:
            protocol.__dict__[name] = copy.copy(shared[name])
        # aiosmtpd keeps this dict on the class: SMTP.__init__ empties it for
        # every connection and EHLO adds 26 to its MAIL limit, so concurrent
        # sessions reset and raise each other's limit. Each connection gets its own.
        protocol.command_size_limits = collections.defaultdict(lambda: cls.command_size_limit)
        return protocol

    return build
