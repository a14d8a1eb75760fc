"""protocol_factory gives each connection what SMTP.__init__ would have given it."""

from __future__ import annotations

import asyncio
import inspect
import ssl
from typing import Any

from mta.smtp.handler import InboundSMTP
from mta.smtp.protocol import protocol_factory


class Handler:
    async def handle_EHLO(self, server: Any, session: Any, envelope: Any, hostname: str, r: Any):
        session.host_name = hostname
        return r

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        return "250 OK"

    async def auth_CUSTOM(self, server: Any, args: list[str]) -> Any:
        return None


def bound_to(value: Any) -> Any:
    return value.__self__ if inspect.ismethod(value) else None


async def test_a_built_protocol_matches_a_constructed_one() -> None:
    loop = asyncio.get_running_loop()
    handler = Handler()
    options: dict[str, Any] = {
        "data_size_limit": 1000,
        "enable_SMTPUTF8": True,
        "hostname": "mx.test",
        "ident": "mta",
        "tls_context": ssl.create_default_context(ssl.Purpose.CLIENT_AUTH),
        "timeout": 30,
        "auth_require_tls": False,
        "loop": loop,
    }
    build = protocol_factory(InboundSMTP, handler, **options)
    built, other = build(), build()
    constructed = InboundSMTP(handler, **options)
    assert type(built) is InboundSMTP
    # The one addition: a MAIL line limit of its own (aiosmtpd keeps it on the class).
    assert vars(built).keys() == vars(constructed).keys() | {"command_size_limits"}
    assert built.command_size_limits is not other.command_size_limits
    for name, expected in vars(constructed).items():
        value = getattr(built, name)
        assert type(value) is type(expected), name
        if name == "_smtp_methods":
            assert value.keys() == expected.keys()
            assert all(m.__self__ is built for m in value.values())
            assert {m.__func__ for m in value.values()} == {m.__func__ for m in expected.values()}
        elif name == "_auth_methods":
            assert value.keys() == expected.keys() == {"LOGIN", "PLAIN", "CUSTOM"}
            for mechanism, attr in value.items():
                owner = built if attr.is_builtin else handler
                assert bound_to(attr.method) is owner
                assert attr.method.__func__ is expected[mechanism].method.__func__
        elif bound_to(expected) is constructed:
            assert bound_to(value) is built and value.__func__ is expected.__func__
        elif isinstance(expected, (asyncio.StreamReader, asyncio.Future)) or name in (
            "_drain_waiters",
            "_stream_reader_wr",
        ):
            # Per-connection objects: each connection has its own.
            assert value is not getattr(other, name), name
        else:
            assert value == expected, name
            if isinstance(value, (dict, list, set)):
                assert value is not getattr(other, name), name  # copied, not shared
    reader = vars(built)["_strong_reader"]
    assert vars(built)["_stream_reader_wr"]() is reader
    assert reader._limit == InboundSMTP.line_length_limit


async def test_built_protocols_serve_independent_sessions() -> None:
    loop = asyncio.get_running_loop()
    build = protocol_factory(InboundSMTP, Handler(), hostname="mx.test", ident="mta", loop=loop)
    server = await loop.create_server(build, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        replies = await asyncio.gather(*(exchange(port, n) for n in range(3)))
    finally:
        server.close()
    for reply in replies:
        assert reply.startswith(b"220 mx.test mta")
        assert reply.count(b"250 OK") == 3, reply  # MAIL, RCPT, DATA of this session only
        assert reply.endswith(b"221 Bye\r\n")


async def exchange(port: int, n: int) -> bytes:
    async with asyncio.timeout(10):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return await converse(reader, writer, n)


async def converse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> bytes:
    writer.write(
        f"EHLO c{n}.test\r\nMAIL FROM:<s{n}@a.test>\r\nRCPT TO:<r{n}@b.test>\r\nDATA\r\n".encode()
    )
    head = await reader.readuntil(b"354 End data with <CR><LF>.<CR><LF>\r\n")
    writer.write(b"Subject: x\r\n\r\nbody\r\n.\r\nQUIT\r\n")
    reply = head + await reader.read()
    writer.close()
    return reply


async def test_a_new_connection_does_not_reset_another_sessions_line_limit() -> None:
    """EHLO with SIZE lengthens that session's MAIL line by 26 (RFC 1870): 538 bytes.

    aiosmtpd keeps the limits on the class and empties them for every new
    connection, which took the 26 bytes back from sessions already past EHLO.
    """
    loop = asyncio.get_running_loop()
    build = protocol_factory(
        InboundSMTP, Handler(), hostname="mx.test", ident="mta", data_size_limit=1000, loop=loop
    )
    server = await loop.create_server(build, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with asyncio.timeout(10):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            await reader.readline()
            writer.write(b"EHLO ext.test\r\n")
            while not (await reader.readline()).startswith(b"250 "):
                pass
            late_r, late_w = await asyncio.open_connection("127.0.0.1", port)
            await late_r.readline()  # the newcomer's greeting: it has been built
            # 530 bytes: over the plain 512, within this EHLO session's 538.
            line = b"MAIL FROM:<" + b"a" * (530 - 21) + b"@a.test>\r\n"
            assert len(line) == 530
            writer.write(line)
            reply = await reader.readline()
            assert not reply.startswith(b"500 Command line too long"), reply
            for w in (writer, late_w):
                w.close()
    finally:
        server.close()
