"""COMPRESS=DEFLATE (RFC 4978): after the OK both directions are raw deflate.

imaplib has no COMPRESS, so these tests speak the protocol over a TLS socket
with zlib, as a client library does; test_mbsync.py checks a real client
(isync) syncing a mailbox through it.
"""

from __future__ import annotations

import socket
import ssl
import zlib

from tests.mta.imap.conftest import Imap, Mailbox, client_tls, run

FOLDED_BODY = b"".join(b"line %d of a long and repetitive body\r\n" % n for n in range(2000))


class Client:
    """A blocking IMAP client speaking plainly until :meth:`deflate`."""

    def __init__(self, port: int) -> None:
        raw = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock: ssl.SSLSocket = client_tls().wrap_socket(raw, server_hostname="localhost")
        self.inflater: zlib._Decompress | None = None
        self.deflater: zlib._Compress | None = None
        self.buffer = b""
        self.line()  # the greeting

    def deflate(self) -> None:
        self.inflater = zlib.decompressobj(-zlib.MAX_WBITS)
        self.deflater = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)

    def send(self, data: bytes) -> None:
        if self.deflater is not None:
            data = self.deflater.compress(data) + self.deflater.flush(zlib.Z_SYNC_FLUSH)
        self.sock.sendall(data)

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        if not chunk:
            return False
        self.buffer += self.inflater.decompress(chunk) if self.inflater else chunk
        return True

    def line(self) -> bytes:
        while b"\r\n" not in self.buffer:
            if not self._fill():
                raise ConnectionError(f"closed; had {self.buffer[:200]!r}")
        line, _, self.buffer = self.buffer.partition(b"\r\n")
        return line

    def exactly(self, count: int) -> bytes:
        while len(self.buffer) < count:
            if not self._fill():
                raise ConnectionError("closed")
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def command(self, tag: str, text: bytes) -> list[bytes]:
        """Send ``tag text``; the lines up to the tagged one (literals inline)."""
        self.send(tag.encode() + b" " + text + b"\r\n")
        lines = []
        while True:
            line = self.line()
            if line.endswith(b"}") and b"{" in line:
                size = int(line.rsplit(b"{", 1)[1][:-1])
                line += b"\r\n" + self.exactly(size) + self.line()
            lines.append(line)
            if line.startswith(tag.encode() + b" "):
                return lines

    def close(self) -> None:
        self.sock.close()


def session(imap: Imap, user: Mailbox) -> None:
    client = Client(imap.tls_port)
    try:
        # Not before sign-in: COMPRESS is an authenticated-state command.
        assert client.command("a1", b"COMPRESS DEFLATE")[-1].startswith(b"a1 BAD")
        login = client.command(
            "a2", b'LOGIN "%s" "%s"' % (user.email.encode(), user.password.encode())
        )
        assert b"COMPRESS=DEFLATE" in login[-1]
        assert client.command("a3", b"COMPRESS GZIP")[-1].startswith(b"a3 NO")
        assert client.command("a4", b"COMPRESS DEFLATE")[-1] == b"a4 OK DEFLATE active"
        client.deflate()

        # An APPEND with a non-synchronising literal, deflated like the rest.
        message = b"From: a@remote.test\r\nSubject: packed\r\n\r\n" + FOLDED_BODY
        appended = client.command("a5", b"APPEND INBOX {%d+}\r\n" % len(message) + message)
        assert appended[-1].startswith(b"a5 OK"), appended
        assert client.command("a6", b"SELECT INBOX")[-1].startswith(b"a6 OK")
        fetched = client.command("a7", b"FETCH 1 BODY.PEEK[]")
        assert fetched[0].endswith(b"{%d}\r\n" % len(message) + message + b")"), fetched[0][-80:]
        # Once on, it stays on: no second COMPRESS, and CAPABILITY stops offering it.
        assert client.command("a8", b"COMPRESS DEFLATE")[-1].startswith(
            b"a8 NO [COMPRESSIONACTIVE]"
        )
        capability = client.command("a9", b"CAPABILITY")
        assert b"COMPRESS" not in capability[0] and b"IMAP4rev2" in capability[0]
        assert client.command("a10", b"LOGOUT")[-1].startswith(b"a10 OK")
    finally:
        client.close()


async def test_deflate_both_ways_after_the_ok(imap: Imap, alice: Mailbox) -> None:
    await run(session, imap, alice)


def endless_line(imap: Imap, user: Mailbox) -> bytes:
    """A few kilobytes that inflate to 16 MiB with no line end: refused as a line
    too long, not held in memory."""
    client = Client(imap.tls_port)
    try:
        client.command("a1", b'LOGIN "%s" "%s"' % (user.email.encode(), user.password.encode()))
        client.command("a2", b"COMPRESS DEFLATE")
        client.deflate()
        assert client.deflater is not None
        bomb = client.deflater.compress(b"a3 NOOP " + b"x" * (16 << 20))
        client.sock.sendall(bomb + client.deflater.flush(zlib.Z_SYNC_FLUSH))
        return client.line()
    finally:
        client.close()


async def test_a_deflated_endless_line_is_refused(imap: Imap, alice: Mailbox) -> None:
    assert (await run(endless_line, imap, alice)).startswith(b"* BYE [TOOBIG]")


def corrupt_stream(imap: Imap, user: Mailbox) -> bytes:
    client = Client(imap.tls_port)
    try:
        client.command("a1", b'LOGIN "%s" "%s"' % (user.email.encode(), user.password.encode()))
        client.command("a2", b"COMPRESS DEFLATE")
        client.deflate()
        client.sock.sendall(b"\xff\xff\xff\xff not deflate at all\r\n")
        return client.sock.recv(65536)
    finally:
        client.close()


async def test_a_stream_that_is_not_deflate_ends_the_connection(imap: Imap, alice: Mailbox) -> None:
    assert await run(corrupt_stream, imap, alice) == b""
