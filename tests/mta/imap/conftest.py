"""The IMAP server on real ports in the test's event loop; mailboxes with passwords."""

from __future__ import annotations

import asyncio
import imaplib
import socket
import ssl
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from common.runtime import Runtime
from mta.context import MtaContext
from mta.imap import server as imap_server
from mta.settings import MtaSettings
from mta.smtp import server as smtp_server
from tests.mta.jmap.conftest import PASSWORD, Mailbox, make_mailbox

__all__ = [
    "PASSWORD",
    "Imap",
    "Mailbox",
    "Raw",
    "client_tls",
    "maildir_messages",
    "numbered_message",
    "run",
    "seed_inbox",
    "seeded_flagged",
    "seeded_seen",
    "server_messages",
]


def client_tls() -> ssl.SSLContext:
    # The development certificate is self-signed.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class Raw:
    """A line-level client over implicit TLS, for what imaplib will not send."""

    def __init__(self, port: int) -> None:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock = client_tls().wrap_socket(sock)
        self.file = self.sock.makefile("rb")
        self.greeting = self.line()

    def line(self) -> bytes:
        return self.file.readline()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def until(self, tag: bytes) -> list[bytes]:
        out = []
        while True:
            line = self.line()
            out.append(line)
            if not line or line.startswith(tag + b" ") or line.startswith(b"* BYE"):
                return out

    def close(self) -> None:
        self.sock.close()


@dataclass
class Imap:
    port: int  # STARTTLS
    tls_port: int  # implicit TLS
    ctx: MtaContext

    def connect(self, user: Mailbox | None = None) -> imaplib.IMAP4_SSL:
        client = imaplib.IMAP4_SSL("127.0.0.1", self.tls_port, ssl_context=client_tls(), timeout=20)
        if user is not None:
            client.login(user.email, user.password)
        return client


def imap_test_config(mta_config: MtaSettings) -> MtaSettings:
    return replace(
        mta_config,
        imap_host="127.0.0.1",
        imap_port=0,
        imaps_port=0,
        submission_plaintext_loopback=False,
        smtp_error_sleep=0.0,
        submission_auth_failures=5,
        auth_checks=False,
    )


@pytest.fixture
def imap_config(mta_config: MtaSettings) -> MtaSettings:
    return imap_test_config(mta_config)


@pytest.fixture
async def imap(runtime: Runtime, imap_config: MtaSettings) -> AsyncIterator[Imap]:
    ctx = MtaContext.build(runtime, imap_config)
    async with imap_server.serve(ctx) as servers:
        plain, tls = imap_server.bound_ports(servers)
        yield Imap(plain, tls, ctx)


@pytest.fixture
async def smtp(imap: Imap) -> AsyncIterator[int]:
    """The inbound SMTP daemon of the same store."""
    async with smtp_server.serve(imap.ctx) as srv:
        yield smtp_server.bound_port(srv)


@pytest.fixture
async def alice(db: Any) -> Mailbox:
    return await make_mailbox(db, "alice@example.test")


@pytest.fixture
async def bob(db: Any) -> Mailbox:
    return await make_mailbox(db, "bob@other.test")


def run(fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """A blocking client call off the event loop the server runs on."""
    return asyncio.to_thread(fn, *args, **kw)


# What the sync-client tests (mbsync, offlineimap) share: a numbered mailbox on
# the server, and each side's messages as bytes -> flags.


def numbered_message(n: int) -> bytes:
    """Message n of a synced mailbox: distinct bytes, lengths varying with n."""
    return (
        f"From: Sender {n} <s{n}@remote.test>\r\nTo: alice@example.test\r\n"
        f"Subject: message {n}\r\nMessage-ID: <m{n}@remote.test>\r\n\r\nbody {n}\r\n"
        + "x" * (n % 97)
        + "\r\n"
    ).encode()


def seeded_seen(n: int) -> bool:
    return bool(n % 2 or n % 3 == 0)


def seeded_flagged(n: int) -> bool:
    return not n % 2 and n % 3 == 0


async def seed_inbox(imap: Imap, user: Mailbox, count: int) -> None:
    """Append messages 0..count-1 to the Inbox, half \\Seen, every sixth \\Flagged too."""

    def seed() -> None:
        c = imap.connect(user)
        for n in range(count):
            flags = "(\\Seen)" if n % 2 else "(\\Seen \\Flagged)" if n % 3 == 0 else None
            c.append("INBOX", flags, None, numbered_message(n))
        c.logout()

    await run(seed)


async def server_messages(
    imap: Imap, user: Mailbox, normalise: Callable[[bytes], bytes] = bytes
) -> dict[bytes, bytes]:
    """The Inbox as the server holds it: message bytes -> its FLAGS item."""

    def view() -> dict[bytes, bytes]:
        c = imap.connect(user)
        c.select("INBOX", readonly=True)
        _, data = c.fetch("1:*", "(FLAGS BODY.PEEK[])")
        c.logout()
        return {normalise(part[1]): part[0] for part in data if isinstance(part, tuple)}

    return dict(await run(view))


def maildir_messages(folder: Path, normalise: Callable[[bytes], bytes] = bytes) -> dict[bytes, str]:
    """Message bytes -> maildir flags of every message in a maildir folder. A
    maildir keeps Unix line ends (sync clients turn CRLF into LF on the way down
    and back on the way up): read here with CRLF, the bytes the server holds."""
    out = {}
    for sub in ("cur", "new"):
        for f in (folder / sub).iterdir():
            flags = f.name.split(":2,")[1] if ":2," in f.name else ""
            data = f.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            out[normalise(data)] = flags
    return out
