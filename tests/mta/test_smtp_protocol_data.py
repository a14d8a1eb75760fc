"""SMTPProtocol's bulk DATA reader against aiosmtpd's line reader, byte for byte.

The same transactions go to aiosmtpd's own SMTP and to ours over real sockets,
the data split into pieces that arrive separately; the replies and what each
handler received must be the same.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiosmtpd.smtp import SMTP

from mta.smtp.protocol import SMTPProtocol, protocol_factory

SIZE_LIMIT = 3000


class Recorder:
    def __init__(self) -> None:
        self.received: list[tuple[Any, Any]] = []
        self.chunks = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.received.append((envelope.content, envelope.original_content))
        return "250 OK"


class CountingProtocol(SMTPProtocol):
    async def _read_chunk(self) -> bytes:
        self.event_handler.chunks += 1
        return await super()._read_chunk()


class Client:
    """A raw SMTP session that sends bytes in given pieces and reads whole replies."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, port: int) -> Client:
        client = cls(*await asyncio.open_connection("127.0.0.1", port))
        await client.replies(1)
        return client

    async def send(self, *pieces: bytes, pause: float = 0) -> None:
        for piece in pieces:
            self.writer.write(piece)
            await self.writer.drain()
            # Let the server read what came so far, so the pieces arrive apart.
            await asyncio.sleep(pause)

    async def replies(self, count: int) -> list[bytes]:
        out = []
        async with asyncio.timeout(10):
            for _ in range(count):
                while (line := await self.reader.readline())[3:4] == b"-":
                    pass
                out.append(line)
        return out

    def close(self) -> None:
        self.writer.close()


class SpoolingProtocol(CountingProtocol):
    # Every read that completes a line sends the complete lines to the spool file.
    spool_threshold = 1


@pytest.fixture(params=[CountingProtocol, SpoolingProtocol], ids=["in memory", "spooled"])
async def pair(request: pytest.FixtureRequest) -> AsyncIterator[list[tuple[Client, Recorder]]]:
    """One session with aiosmtpd's SMTP and one with ours, each with its own recorder."""
    loop = asyncio.get_running_loop()
    options: dict[str, Any] = {"data_size_limit": SIZE_LIMIT, "hostname": "t", "loop": loop}
    theirs, ours = Recorder(), Recorder()
    servers = [
        await loop.create_server(lambda: SMTP(theirs, **options), "127.0.0.1", 0),
        await loop.create_server(protocol_factory(request.param, ours, **options), "127.0.0.1", 0),
    ]
    sessions = []
    for server, recorder in zip(servers, (theirs, ours), strict=True):
        client = await Client.connect(server.sockets[0].getsockname()[1])
        await client.send(b"EHLO c.test\r\n")
        await client.replies(1)
        sessions.append((client, recorder))
    yield sessions
    for server, (client, _) in zip(servers, sessions, strict=True):
        client.close()
        server.close()


async def transaction(
    client: Client, pieces: list[bytes], after: bytes = b"NOOP\r\n", pause: float = 0
) -> list:
    """MAIL, RCPT, DATA; the data in pieces; a command pipelined right behind the dot."""
    await client.send(b"MAIL FROM:<a@b.test>\r\nRCPT TO:<c@d.test>\r\nDATA\r\n")
    replies = await client.replies(3)
    if not replies[-1].startswith(b"354"):
        return replies
    await client.send(*pieces[:-1], pause=pause)
    await client.send(pieces[-1] + after)
    return replies + await client.replies(2)


def split(data: bytes, rng: random.Random) -> list[bytes]:
    cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randrange(0, 6))))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


LINES = [
    b"plain text",
    b"",
    b".",
    b"..",
    b"...",
    b".hidden",
    b"a.b",
    b"bare\rcr",
    b"bare\nlf",
    b"bare\n.dot after lf",
    b"cr at end\r",
    b"\r",
    b"\n.",
    b"x" * 997,
    b"x" * 998,
    b"." + b"x" * 998,
    b"x" * 999,
    b"x" * 1000,
    b"x" * 1001,
    b"x" * 1002,
    b"x" * 2500,
    "utf-8 ünïcödé".encode(),
    b"\xff\xfe not utf-8",
]


def data_of(lines: list[bytes]) -> bytes:
    # A lone dot is sent doubled or it would end the data; other lines go as they
    # are, so ".hidden" (a client that forgot to double it) loses its dot too.
    return b"".join((b".." if line == b"." else line) + b"\r\n" for line in lines) + b".\r\n"


FIXED = [
    b".\r\n",  # the empty message
    b"..\r\n.\r\n",
    b"only line\r\n.\r\n",
    b"a\r\n\r\n.\r\n",
    b"\r\n.\r\n",
    b"x\r\n..\r\n.\r\n",
    b"ends with dot.\r\n.\r\n",
    b"no CRLF before the dot.\r\n",  # not an end: the data goes on
    (b"y" * 998 + b"\r\n") * 3 + b".\r\n",  # over the size limit, lines fine
    (b"y" * 700 + b"\r\n") * 4 + b"x" * 1500 + b"\r\n.\r\n",  # too much before too long
    b"x" * 1500 + b"\r\n" + (b"y" * 700 + b"\r\n") * 4 + b".\r\n",  # too long before too much
    (b"y" * 998 + b"\r\n") * 2 + b"z" * 999 + b"\r\n.\r\n",  # both in one line of 1001
    (b"y" * 998 + b"\r\n") * 2 + b"z" * 1002 + b"\r\n.\r\n",  # overrun before counting
    b"a" * 5000 + b"\r\n.\r\n",  # one unfinished line over everything
]


async def compare(
    pair: list[tuple[Client, Recorder]], cases: list[list[bytes]], pause: float = 0
) -> None:
    (theirs, their_rec), (ours, our_rec) = pair
    for pieces in cases:
        expected = await transaction(theirs, pieces, pause=pause)
        assert await transaction(ours, pieces, pause=pause) == expected, pieces
    assert our_rec.received == their_rec.received


async def test_fixed_cases_answer_and_store_as_aiosmtpd(
    pair: list[tuple[Client, Recorder]],
) -> None:
    cases = []
    for data in FIXED:
        if not data.endswith(b"\r\n.\r\n") and data != b".\r\n":
            data += b"more\r\n.\r\n"
        cases.append([data])
    await compare(pair, cases)


async def test_the_end_split_at_every_place_is_found(
    pair: list[tuple[Client, Recorder]],
) -> None:
    data = b"line one\r\n..stuffed\r\nlast" + b"\r\n.\r\n"
    cases = [[data[:cut], data[cut:]] for cut in range(len(data) - 8, len(data))]
    cases += [[b".", b"\r", b"\n"], [b".\r", b"\n"], [b"a\r\n", b".", b"\r\n"]]
    await compare(pair, cases, pause=0.002)
    _, recorder = pair[1]
    assert recorder.received[0][1] == b"line one\r\n.stuffed\r\nlast\r\n"
    assert recorder.chunks == 2 * 8 + 3 + 2 + 3  # every piece was a read of its own


async def test_random_messages_answer_and_store_as_aiosmtpd(
    pair: list[tuple[Client, Recorder]],
) -> None:
    rng = random.Random(4524)
    cases = []
    for _ in range(300):
        lines = [rng.choice(LINES) for _ in range(rng.randrange(0, 8))]
        cases.append(split(data_of(lines), rng))
    await compare(pair, cases)


async def test_the_session_goes_on_after_each_refusal(
    pair: list[tuple[Client, Recorder]],
) -> None:
    _, recorder = pair[1]
    client = pair[1][0]
    too_long = await transaction(client, [b"x" * 1200 + b"\r\n.\r\n"])
    too_much = await transaction(client, [(b"y" * 900 + b"\r\n") * 4 + b".\r\n"])
    fine = await transaction(client, [b"fine\r\n.\r\n"])
    assert too_long[-2:] == [b"500 Line too long (see RFC5321 4.5.3.1.6)\r\n", b"250 OK\r\n"]
    assert too_much[-2:] == [b"552 Error: Too much mail data\r\n", b"250 OK\r\n"]
    assert fine[-2:] == [b"250 OK\r\n", b"250 OK\r\n"]
    assert recorder.received == [(b"fine\r\n", b"fine\r\n")]
