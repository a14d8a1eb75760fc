"""A minimal SMTP client for the outbound queue, with PIPELINING (RFC 2920).

aiosmtplib sends one command and waits for its reply: a transaction is four
round trips (MAIL, RCPT, DATA, the content), and its reader keeps one reply
at a time, so commands cannot be sent ahead over its connection. This client
speaks only what delivery needs: the greeting, EHLO (HELO when refused),
STARTTLS, MAIL/RCPT/DATA, RSET and QUIT. When the server offers PIPELINING,
MAIL, every RCPT and DATA go in one write and their replies are read in
order, then the content: two round trips a message. Without it the commands
go one by one, stopping at the first that decides the outcome.

Each recipient's reply is the one that decides its fate, as before: the MAIL
reply when the sender is refused (the RCPT and DATA replies of a pipelined
group then only say "bad sequence"), its own RCPT reply when refused, else
the DATA reply (354 expected) or the reply to the content.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from dataclasses import dataclass
from typing import Any

# RFC 5321 4.5.3.1.5: a reply line is at most 512 octets; some servers send
# longer ones (EHLO lists, multi-line texts), so the bound is generous.
MAX_LINE = 8192
MAX_LINES = 100


class SMTPError(Exception):
    """The conversation failed (not a reply: a reply is an answer, returned)."""


class Disconnected(SMTPError):
    """The server closed the connection, or it broke."""


class ProtocolError(SMTPError):
    """The server said something that is not an SMTP reply."""


@dataclass(frozen=True)
class Answer:
    code: int
    text: str

    @property
    def ok(self) -> bool:
        return 200 <= self.code < 300


class Client:
    """One SMTP connection: :meth:`connect`, then transactions, then :meth:`quit`."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout: float
    ) -> None:
        self.reader = reader
        self.writer = writer
        self.timeout = timeout
        # EHLO keywords (upper case) and their parameters; empty after HELO.
        self.extensions: dict[str, str] = {}
        self.greeting: Answer | None = None

    @classmethod
    async def connect(cls, host: str, port: int, *, seconds: float) -> Client:
        """Connected and greeted; :class:`ProtocolError` carries a refusing greeting.
        ``seconds``: the bound on the connection and on every reply after it."""
        async with asyncio.timeout(seconds):
            reader, writer = await asyncio.open_connection(host, port, limit=MAX_LINE)
        client = cls(reader, writer, seconds)
        try:
            client.greeting = await client.read()
        except BaseException:
            client.close()
            raise
        if client.greeting.code != 220:
            client.close()
            raise ProtocolError(f"greeting {client.greeting.code} {client.greeting.text}")
        return client

    @property
    def is_connected(self) -> bool:
        return not self.writer.is_closing() and not self.reader.at_eof()

    def get_transport_info(self, name: str) -> Any:
        return self.writer.get_extra_info(name)

    def supports(self, extension: str) -> bool:
        return extension.upper() in self.extensions

    async def read(self) -> Answer:
        """One reply, its lines joined with newlines."""
        async with asyncio.timeout(self.timeout):
            return await self._read()

    async def _read(self) -> Answer:
        texts: list[str] = []
        for _ in range(MAX_LINES):
            try:
                line = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:
                raise Disconnected("the server closed the connection") from exc
            except asyncio.LimitOverrunError as exc:
                raise ProtocolError("a reply line too long") from exc
            except OSError as exc:
                raise Disconnected(str(exc)) from exc
            code = line[:3]
            if not code.isdigit() or line[3:4] not in (b" ", b"-", b"\r", b"\n"):
                raise ProtocolError(f"not an SMTP reply: {line[:80]!r}")
            texts.append(line[4:].strip(b" \t\r\n").decode("utf-8", "surrogateescape"))
            if line[3:4] != b"-":
                return Answer(int(code), "\n".join(texts))
        raise ProtocolError(f"a reply of more than {MAX_LINES} lines")

    def write(self, data: bytes) -> None:
        if self.writer.is_closing():
            raise Disconnected("the connection is closed")
        self.writer.write(data)

    async def command(self, line: str) -> Answer:
        self.write(_line(line))
        return await self.read()

    async def ehlo(self, name: str) -> Answer:
        """EHLO, or HELO when the server refuses EHLO; the extensions it offers."""
        answer = await self.command(f"EHLO {name}")
        self.extensions = {}
        if answer.code == 250:
            for item in answer.text.split("\n")[1:]:
                keyword, _, params = item.partition(" ")
                self.extensions[keyword.upper()] = params
            return answer
        if 500 <= answer.code < 600:
            answer = await self.command(f"HELO {name}")
        if answer.code != 250:
            raise ProtocolError(f"EHLO refused: {answer.code} {answer.text}")
        return answer

    async def starttls(self, context: ssl.SSLContext, server_hostname: str) -> None:
        answer = await self.command("STARTTLS")
        if answer.code != 220:
            raise ProtocolError(f"STARTTLS refused: {answer.code} {answer.text}")
        async with asyncio.timeout(self.timeout):
            await self.writer.start_tls(context, server_hostname=server_hostname)
        self.extensions = {}  # RFC 3207 4.2: forget what was said in plaintext

    async def transaction(
        self, mail_from: str, rcpts: list[str], data: bytes, options: list[str]
    ) -> list[Answer]:
        """Send ``data`` (CRLF line ends) to ``rcpts``; the deciding reply of each.

        A connection that breaks raises :class:`Disconnected`; every reply,
        2xx or not, is returned. After a refusal the session is reset (RSET)
        for the next transaction.
        """
        mail = f"MAIL FROM:<{mail_from}>" + "".join(f" {o}" for o in options)
        if self.supports("PIPELINING"):
            answers, ended = await self._pipelined(mail, rcpts, data)
        else:
            answers, ended = await self._stepwise(mail, rcpts, data)
        if not ended:
            await self._reset()  # a transaction left open by a refusal
        return answers

    async def _pipelined(
        self, mail: str, rcpts: list[str], data: bytes
    ) -> tuple[list[Answer], bool]:
        # RFC 2920 3.1: DATA may end a group; its 354 is read after every RCPT's reply.
        self.write(b"".join(_line(c) for c in [mail, *(f"RCPT TO:<{r}>" for r in rcpts), "DATA"]))
        async with asyncio.timeout(self.timeout):
            sender = await self._read()
            replies = [await self._read() for _ in rcpts]
            start = await self._read()
        accepted = [r.ok for r in replies]
        if start.code == 354 and not (sender.ok and any(accepted)):
            # RFC 2920 3.1: DATA accepted with no valid recipient: the message
            # is ended at once, with no content, and not taken as delivered.
            await self._content(b"")
            start = Answer(554, "5.5.1 no valid recipients")
        if not sender.ok:
            return [sender] * len(rcpts), False
        if start.code != 354:
            return [start if ok else r for r, ok in zip(replies, accepted, strict=True)], False
        final = await self._content(data)
        return [final if ok else r for r, ok in zip(replies, accepted, strict=True)], True

    async def _stepwise(
        self, mail: str, rcpts: list[str], data: bytes
    ) -> tuple[list[Answer], bool]:
        sender = await self.command(mail)
        if not sender.ok:
            return [sender] * len(rcpts), False
        replies = [await self.command(f"RCPT TO:<{r}>") for r in rcpts]
        if not any(r.ok for r in replies):
            return replies, False
        start = await self.command("DATA")
        if start.code != 354:
            return [start if r.ok else r for r in replies], False
        final = await self._content(data)
        return [final if r.ok else r for r in replies], True

    async def _content(self, data: bytes) -> Answer:
        self.write(stuffed(data))
        # A large message waits for the socket rather than sitting whole in
        # the transport's buffer (the commands before it are small).
        try:
            async with asyncio.timeout(self.timeout):
                await self.writer.drain()
        except OSError as exc:
            raise Disconnected(str(exc)) from exc
        return await self.read()

    async def _reset(self) -> None:
        with contextlib.suppress(SMTPError, TimeoutError):
            await self.command("RSET")

    async def quit(self) -> None:
        with contextlib.suppress(SMTPError, OSError, TimeoutError):
            await self.command("QUIT")
        self.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


def _line(command: str) -> bytes:
    encoded = command.encode("utf-8")
    if b"\r" in encoded or b"\n" in encoded:
        raise ValueError("a command with a line break")
    return encoded + b"\r\n"


def stuffed(data: bytes) -> bytes:
    """``data`` (CRLF line ends) as DATA sends it: dot-stuffed (RFC 5321 4.5.2),
    ending in CRLF, then the lone dot."""
    if data.startswith(b"."):
        data = b"." + data
    data = data.replace(b"\r\n.", b"\r\n..")
    if data and not data.endswith(b"\r\n"):
        data += b"\r\n"
    return data + b".\r\n"
