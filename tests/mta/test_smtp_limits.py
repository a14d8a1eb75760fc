"""What one client may hold or waste, over real SMTP: connections, deadlines, errors.

The deadlines are the daemon's socket timeouts, so these tests configure them
at a second or two and let them pass; the per-address budget across
connections is a rate-limiter window, moved with the test clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest

from common.clock import ManualClock
from common.db import Database
from mta.context import MtaContext
from mta.smtp import replies, server
from mta.store import emails
from tests.mta import factories
from tests.mta.conftest import with_config
from tests.mta.test_smtp_protocol_data import Client

RCPT = "alice@example.test"
Serve = Callable[..., AbstractAsyncContextManager[int]]


@pytest.fixture
def serve(mta_ctx: MtaContext) -> Serve:
    """serve(**settings): the daemon with those MtaSettings changed, as its port."""

    @asynccontextmanager
    async def running(**changes: Any) -> AsyncIterator[int]:
        async with server.serve(with_config(mta_ctx, **changes)) as srv:
            yield server.bound_port(srv)

    return running


async def connect(port: int, source: str = "127.0.0.1") -> tuple[asyncio.StreamReader, Any]:
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))


class Held:
    """Connections a test keeps open, closed when it is done with them."""

    def __init__(self) -> None:
        self.writers: list[Any] = []

    async def greeting(self, port: int, source: str = "127.0.0.1") -> tuple[bytes, bytes]:
        """The first reply, and what follows before the server closes (b"" if it stays open)."""
        reader, writer = await connect(port, source)
        first = await asyncio.wait_for(reader.readline(), 5)
        try:
            rest = await asyncio.wait_for(reader.read(), 0.3)
        except TimeoutError:
            rest = b""
            self.writers.append(writer)
        else:
            writer.close()
        return first, rest

    def close(self) -> None:
        while self.writers:
            self.writers.pop().close()


def reply_line(reply: str) -> bytes:
    return f"{reply}\r\n".encode()


async def test_connections_over_the_per_address_cap_get_421_and_are_closed(serve: Serve) -> None:
    held = Held()
    async with serve(smtp_max_connections_per_ip=2, smtp_max_connections=10) as port:
        firsts = [(await held.greeting(port))[0] for _ in range(2)]
        refused, after = await held.greeting(port)
        other_address, _ = await held.greeting(port, "127.0.0.2")
        # A connection that ends gives its place back.
        held.writers.pop(0).close()
        await asyncio.sleep(0.1)
        again, _ = await held.greeting(port)
        held.close()
    assert all(first.startswith(b"220") for first in firsts)
    assert refused == reply_line(replies.too_many_connections("mx.test"))
    assert after == b""  # closed, never greeted
    assert other_address.startswith(b"220")  # the cap is per client address
    assert again.startswith(b"220")


async def test_connections_over_the_per_process_cap_get_421(serve: Serve) -> None:
    held = Held()
    async with serve(smtp_max_connections_per_ip=2, smtp_max_connections=3) as port:
        sources = ["127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.3"]
        firsts = [(await held.greeting(port, source))[0] for source in sources]
        held.close()
    assert all(first.startswith(b"220") for first in firsts[:3])
    assert firsts[3] == reply_line(replies.too_many_connections("mx.test"))


async def dribble_until_closed(
    reader: asyncio.StreamReader, writer: Any, every: float, limit: float
) -> tuple[float, bytes]:
    """Send a byte every ``every`` seconds until the server closes; (seconds, what it said)."""
    started = time.monotonic()
    said = b""
    while time.monotonic() - started < limit:
        try:
            writer.write(b"x")
            got = await asyncio.wait_for(reader.read(1000), every)
        except TimeoutError:
            continue
        except ConnectionError:
            break  # a byte written after the server closed: it answered RST
        said += got
        if not got:
            break
    writer.close()
    return time.monotonic() - started, said


async def test_a_command_line_sent_a_byte_at_a_time_is_cut_at_the_command_deadline(
    serve: Serve,
) -> None:
    async with serve(smtp_timeout=1) as port:
        reader, writer = await connect(port)
        await reader.readline()
        writer.write(b"EHLO client.test\r\n")
        await Client(reader, writer).replies(1)
        # A loaded machine may be late to cut; what matters is that the bytes
        # kept coming and the cut came anyway (well before the dribbler's limit).
        seconds, said = await dribble_until_closed(reader, writer, every=0.1, limit=15)
    assert 0.9 < seconds < 10
    assert said == b"421 4.4.2 mx.test Error: timeout exceeded\r\n"


async def test_data_has_one_deadline_that_slow_bytes_do_not_move(
    db: Database, serve: Serve
) -> None:
    owner = await factories.mailbox_owner(db, RCPT)
    async with serve(smtp_timeout=1, smtp_data_timeout=2) as port:
        client = await Client.connect(port)
        await client.send(b"EHLO c.test\r\nMAIL FROM:<b@sender.test>\r\n")
        await client.send(f"RCPT TO:<{RCPT}>\r\nDATA\r\n".encode())
        assert (await client.replies(4))[-1].startswith(b"354")
        seconds, said = await dribble_until_closed(
            client.reader, client.writer, every=0.1, limit=15
        )
        # Longer than a command may take, since it is DATA; cut at the DATA deadline.
        assert 1.9 < seconds < 10
        assert said == b"421 4.4.2 mx.test Error: timeout exceeded\r\n"

        # Data that ends within its deadline is stored, however long it took.
        client = await Client.connect(port)
        await client.send(b"EHLO c.test\r\nMAIL FROM:<b@sender.test>\r\n")
        await client.send(f"RCPT TO:<{RCPT}>\r\nDATA\r\n".encode())
        assert (await client.replies(4))[-1].startswith(b"354")
        await client.send(b"Subject: slow\r\n\r\n", b"a\r\n", b"b\r\n", pause=0.4)
        await client.send(b".\r\n")
        [stored] = await client.replies(1)
        client.close()
    assert stored.startswith(b"250 2.0.0 OK: stored as")
    async with db.connection() as conn:
        assert [r["subject"] for r in await emails.for_address(conn, owner["address_id"])] == [
            "slow"
        ]


async def rcpt_replies(client: Client, rcpts: list[str]) -> list[tuple[float, bytes]]:
    """Each RCPT's reply with the seconds it took; stops when the server closes."""
    out = []
    for address in rcpts:
        started = time.monotonic()
        await client.send(f"RCPT TO:<{address}>\r\n".encode())
        line = await asyncio.wait_for(client.reader.readline(), 10)
        if not line:
            break
        out.append((time.monotonic() - started, line))
    return out


async def test_unknown_recipients_slow_the_session_down_then_drop_it(
    db: Database, serve: Serve
) -> None:
    await factories.mailbox_owner(db, RCPT)
    probes = [f"nobody{i}@example.test" for i in range(4)]
    async with serve(
        smtp_soft_error_limit=2, smtp_hard_error_limit=4, smtp_error_sleep=0.5
    ) as port:
        client = await Client.connect(port)
        await client.send(b"EHLO c.test\r\nMAIL FROM:<b@sender.test>\r\n")
        await client.replies(2)
        answers = await rcpt_replies(client, [RCPT, *probes])
        rest = await asyncio.wait_for(client.reader.read(), 5)
        client.close()
    lines = [line for _, line in answers]
    unknown = reply_line(replies.UNKNOWN_USER)
    assert lines == [reply_line(replies.RECIPIENT_OK), unknown, unknown, unknown, unknown]
    # From the second error on (the soft limit) every reply waits.
    assert [seconds >= 0.5 for seconds, _ in answers] == [False, False, True, True, True]
    # At the fourth (the hard limit): 421 and the connection is closed.
    assert rest == reply_line(replies.too_many_errors("mx.test"))


async def test_a_delivered_message_clears_the_error_count(db: Database, serve: Serve) -> None:
    await factories.mailbox_owner(db, RCPT)
    async with serve(smtp_soft_error_limit=0, smtp_hard_error_limit=3) as port:
        client = await Client.connect(port)
        await client.send(b"EHLO c.test\r\n")
        await client.replies(1)
        for n in range(3):
            await client.send(b"MAIL FROM:<b@sender.test>\r\n")
            await client.send(
                f"RCPT TO:<x{n}@example.test>\r\nRCPT TO:<y{n}@example.test>\r\n".encode()
            )
            await client.send(f"RCPT TO:<{RCPT}>\r\nDATA\r\n".encode())
            assert (await client.replies(5))[-1].startswith(b"354")
            await client.send(b"Subject: ok\r\n\r\nok\r\n.\r\n")
            assert (await client.replies(1))[0].startswith(b"250 2.0.0 OK: stored as")
        client.close()


async def test_refused_recipients_are_budgeted_per_address_across_connections(
    db: Database, serve: Serve, clock: ManualClock
) -> None:
    await factories.mailbox_owner(db, RCPT)
    async with serve(smtp_rcpt_errors_per_ip=3, smtp_rcpt_error_window=600) as port:
        first = await Client.connect(port)
        await first.send(b"EHLO c.test\r\nMAIL FROM:<b@sender.test>\r\n")
        await first.replies(2)
        spent = await rcpt_replies(first, ["a@example.test", "b@elsewhere.test", "c@example.test"])
        first.close()
        # A new connection does not start the count again.
        second = await Client.connect(port)
        await second.send(b"EHLO c.test\r\nMAIL FROM:<b@sender.test>\r\n")
        await second.replies(2)
        [(_, over)] = await rcpt_replies(second, ["d@example.test"])
        closed = await asyncio.wait_for(second.reader.read(), 5)
        second.close()
        # The next window has a fresh budget.
        clock.advance(600)
        third = await Client.connect(port)
        await third.send(b"EHLO c.test\r\nMAIL FROM:<b@sender.test>\r\n")
        await third.replies(2)
        [(_, fresh), (_, ok)] = await rcpt_replies(third, ["e@example.test", RCPT])
        third.close()
    assert [line[:3] for _, line in spent] == [b"550", b"554", b"550"]
    assert over == reply_line(replies.too_many_unknown_recipients("mx.test"))
    assert closed == b""
    assert fresh == reply_line(replies.UNKNOWN_USER)
    assert ok == reply_line(replies.RECIPIENT_OK)


async def test_a_session_idling_on_noop_is_dropped_after_the_junk_limit(serve: Serve) -> None:
    """NOOP, RSET, VRFY and HELP succeed, but past the junk limit each counts as an error."""
    async with serve(
        smtp_junk_command_limit=3, smtp_soft_error_limit=0, smtp_hard_error_limit=2
    ) as port:
        client = await Client.connect(port)
        await client.send(b"EHLO c.test\r\n")
        await client.replies(1)
        # Three free, then the fourth and fifth are errors: the fifth reaches the hard limit.
        await client.send(b"NOOP\r\nRSET\r\nHELP\r\nNOOP\r\nNOOP\r\n")
        answered = await client.replies(5)
        rest = await asyncio.wait_for(client.reader.read(), 5)
        client.close()
    assert [line[:3] for line in answered] == [b"250", b"250", b"250", b"250", b"250"]
    assert rest == reply_line(replies.too_many_errors("mx.test"))


async def test_help_still_explains_the_counted_commands(serve: Serve) -> None:
    async with serve() as port:
        client = await Client.connect(port)
        await client.send(b"EHLO c.test\r\nHELP NOOP\r\n")
        await client.replies(1)
        [answer] = await client.replies(1)
        client.close()
    assert answer == b"250 Syntax: NOOP [ignored]\r\n"


def test_the_421_refusal_is_sent_under_uvloop_as_the_daemons_run() -> None:
    # The daemons run on uvloop, whose transports are no asyncio.Transport
    # subclasses; the refusal must reach the client there too, not an EOF.
    import uvloop

    from mta.smtp.handler import InboundSMTP
    from mta.smtp.limits import ConnectionLimits

    async def refused_greeting() -> bytes:
        loop = asyncio.get_running_loop()
        limits = ConnectionLimits(max_total=10, max_per_ip=0)
        listener = await loop.create_server(
            lambda: InboundSMTP(object(), connections=limits, hostname="mx.test", loop=loop),
            "127.0.0.1",
            0,
        )
        port = listener.sockets[0].getsockname()[1]
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            said = await asyncio.wait_for(reader.read(), 5)
            writer.close()
            return said
        finally:
            listener.close()

    assert uvloop.run(refused_greeting()) == reply_line(replies.too_many_connections("mx.test"))
