"""The outbound SMTP client against scripted servers: PIPELINING (RFC 2920) and without it.

The pipelining server answers MAIL, RCPT and DATA only once it has read the
whole group, as a server may: a client that waited for each reply would wait
for ever (and fail on its timeout). The other server offers no PIPELINING and
records what arrived in each read: a client must send one command at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest

from mta.outbound.client import Connections, Reply, transact, transact_many
from mta.outbound.routing import Host, Route

CONTENT = (
    b"From: alice@example.test\r\nTo: bob@remote.test\r\nSubject: dots\r\n\r\n"
    b".a line that starts with a dot\r\n..and two\r\nthe end\r\n"
)


@dataclass
class Script:
    pipelining: bool
    mail_reply: str = "250 2.1.0 sender ok"
    # Recipient -> its RCPT reply (250 when not named).
    refuse: dict[str, str] = field(default_factory=dict)
    final_reply: str = "250 2.0.0 queued as 1"
    # What the server saw: each read, each command, each message (rcpts, content).
    reads: list[bytes] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    messages: list[tuple[list[str], bytes]] = field(default_factory=list)


class Scripted(asyncio.Protocol):
    def __init__(self, script: Script) -> None:
        self.script = script
        self.buffer = b""
        self.in_data = False
        self.pending: list[str] = []  # replies held until the group's DATA
        self.sender_ok = False
        self.rcpts: list[str] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(b"220 mx.remote.test ESMTP\r\n")

    def data_received(self, data: bytes) -> None:
        self.script.reads.append(data)
        self.buffer += data
        while True:
            if self.in_data:
                end = self.buffer.find(b"\r\n.\r\n")
                if end < 0:
                    return
                content, self.buffer = self.buffer[: end + 2], self.buffer[end + 5 :]
                self.in_data = False
                unstuffed = b"\r\n".join(
                    line[1:] if line.startswith(b".") else line for line in content.split(b"\r\n")
                )
                self.script.messages.append((self.rcpts, unstuffed))
                self.reply(self.script.final_reply)
                self.rcpts, self.sender_ok = [], False
                continue
            line, sep, rest = self.buffer.partition(b"\r\n")
            if not sep:
                return
            self.buffer = rest
            self.command(line.decode())

    def command(self, line: str) -> None:
        self.script.commands.append(line)
        verb = line.split(" ", 1)[0].split(":", 1)[0].upper()
        if verb == "EHLO":
            extensions = ["PIPELINING"] if self.script.pipelining else []
            lines = ["mx.remote.test", *extensions, "8BITMIME"]
            self.transport.write(
                "".join(
                    f"250{' ' if i == len(lines) - 1 else '-'}{text}\r\n"
                    for i, text in enumerate(lines)
                ).encode()
            )
        elif verb == "MAIL":
            self.sender_ok = self.script.mail_reply.startswith("2")
            self.hold(self.script.mail_reply)
        elif verb == "RCPT":
            rcpt = line.partition("<")[2].rstrip(">")
            if not self.sender_ok:
                self.hold("503 5.5.1 sender first")
                return
            reply = self.script.refuse.get(rcpt, "250 2.1.5 ok")
            if reply.startswith("2"):
                self.rcpts.append(rcpt)
            self.hold(reply)
        elif verb == "DATA":
            if self.sender_ok and self.rcpts:
                self.in_data = True
                self.hold("354 end with .")
            else:
                self.hold("554 5.5.1 no valid recipients")
            self.flush()
        elif verb == "RSET":
            self.rcpts, self.sender_ok = [], False
            self.reply("250 2.0.0 reset")
        elif verb == "QUIT":
            self.reply("221 2.0.0 bye")
            self.transport.close()
        else:
            self.reply("502 5.5.2 unknown")

    def hold(self, reply: str) -> None:
        self.pending.append(reply)
        if not self.script.pipelining:
            self.flush()

    def flush(self) -> None:
        self.transport.write("".join(f"{r}\r\n" for r in self.pending).encode())
        self.pending = []

    def reply(self, reply: str) -> None:
        self.transport.write(f"{reply}\r\n".encode())


@asynccontextmanager
async def server(script: Script) -> AsyncIterator[Route]:
    loop = asyncio.get_running_loop()
    srv = await loop.create_server(lambda: Scripted(script), "127.0.0.1", 0)
    port = srv.sockets[0].getsockname()[1]
    try:
        yield Route("remote.test", (Host("mx.remote.test", ("127.0.0.1",)),), port, False)
    finally:
        srv.close()


@pytest.fixture
async def connections() -> AsyncIterator[Connections]:
    # A client that waited for each reply from the pipelining server would time out.
    pool = Connections("mx.example.test", per_destination=2, idle=30, timeout=5)
    yield pool
    await pool.close()


def lines(replies: list[Reply]) -> list[str]:
    return [r.line for r in replies]


async def test_a_pipelined_transaction_maps_one_refused_recipient_and_delivers_the_rest(
    connections: Connections,
) -> None:
    script = Script(pipelining=True, refuse={"nobody@remote.test": "550 5.1.1 no such user"})
    async with server(script) as route, connections.session(route) as session:
        replies = await transact_many(
            session,
            "bounces+x@example.test",
            ["bob@remote.test", "nobody@remote.test", "carol@remote.test"],
            CONTENT,
        )
    assert lines(replies) == [
        "250 2.0.0 queued as 1",
        "550 5.1.1 no such user",
        "250 2.0.0 queued as 1",
    ]
    # Delivered once, to the accepted two, the dotted lines intact.
    assert script.messages == [(["bob@remote.test", "carol@remote.test"], CONTENT)]
    # The whole group was answered at once; nothing else was sent before the content.
    assert script.commands[1:5] == [
        "MAIL FROM:<bounces+x@example.test>",
        "RCPT TO:<bob@remote.test>",
        "RCPT TO:<nobody@remote.test>",
        "RCPT TO:<carol@remote.test>",
    ]
    assert script.commands[5] == "DATA" and "RSET" not in script.commands


async def test_a_refused_mail_from_is_every_recipients_reply_and_the_session_goes_on(
    connections: Connections,
) -> None:
    script = Script(pipelining=True, mail_reply="553 5.7.1 sender rejected")
    async with server(script) as route:
        async with connections.session(route) as session:
            refused = await transact_many(
                session, "spam@example.test", ["bob@remote.test", "carol@remote.test"], CONTENT
            )
        assert lines(refused) == ["553 5.7.1 sender rejected"] * 2
        assert all(r.permanent for r in refused) and script.messages == []
        assert script.commands[-1] == "RSET"  # the refused transaction is cleared

        # The same session (reused) carries the next message.
        script.mail_reply = "250 2.1.0 ok"
        async with connections.session(route) as session:
            accepted = await transact(session, "alice@example.test", "bob@remote.test", CONTENT)
    assert accepted.ok and accepted.line == "250 2.0.0 queued as 1"
    assert script.messages == [(["bob@remote.test"], CONTENT)]
    assert script.commands.count("EHLO mx.example.test") == 1


async def test_without_pipelining_commands_go_one_at_a_time_with_the_same_replies(
    connections: Connections,
) -> None:
    script = Script(pipelining=False, refuse={"nobody@remote.test": "550 5.1.1 no such user"})
    async with server(script) as route:
        async with connections.session(route) as session:
            replies = await transact_many(
                session, "alice@example.test", ["nobody@remote.test", "bob@remote.test"], CONTENT
            )
        assert lines(replies) == ["550 5.1.1 no such user", "250 2.0.0 queued as 1"]
        assert script.messages == [(["bob@remote.test"], CONTENT)]

        # Every recipient refused: no DATA at all, the transaction reset.
        async with connections.session(route) as session:
            refused = await transact(session, "alice@example.test", "nobody@remote.test", CONTENT)
        assert refused.line == "550 5.1.1 no such user"
        assert script.commands[-2:] == ["RCPT TO:<nobody@remote.test>", "RSET"]

        script.mail_reply = "451 4.3.0 try later"
        async with connections.session(route) as session:
            deferred = await transact(session, "alice@example.test", "bob@remote.test", CONTENT)
        assert deferred.line == "451 4.3.0 try later" and not deferred.permanent
    # Each read of the server held one command (the content aside): nothing was sent ahead.
    commands = [r for r in script.reads if not r.startswith(b"From:")]
    assert all(r.count(b"\r\n") == 1 for r in commands), commands
    assert len(script.messages) == 1
