"""The private names of libraries our hot paths rely on, checked in one place.

The modules below go below a library's public API, each for measured speed
(docs/architecture.md and docs/performance.md say why):

- common/db.py over aiopg (LeanPool and the statement runner);
- mta/smtp/protocol.py over aiosmtpd (the bulk DATA reader, the address fast
  path and protocol_factory);
- mta/access/listener.py (IMAP, POP3, ManageSieve) over asyncio's StreamReader (``_buffer``: bytes sent
  behind STARTTLS before the handshake are refused);
- common/outbound.py over aiohttp's client (the SSRF guard checks the
  resolved addresses in ``TCPConnector._resolve_host``, where every
  connection's name resolution passes).

Those names are not a contract: an upgrade may rename or drop any of them.
These tests pin the versions the code was written against and check every
name, so an upgrade fails here, loudly and by name, not somewhere deep in a
pooled checkout or an SMTP session. Upgrading means re-reading the new
release's code, then updating the names and the version below together.
"""

from __future__ import annotations

import asyncio
import inspect
from importlib.metadata import version

import aiohttp
import aiopg
import aiosmtpd.smtp
import pytest

from common.db import Database

AIOPG_VERSION = "1.4.0"
AIOSMTPD_VERSION = "1.4.6"
AIOHTTP_VERSION = "3.14.5"

# Attributes of aiopg.Pool that LeanPool reads, writes or overrides.
POOL_INTERNALS = ("_acquire", "_closing", "_free", "_used", "_cond", "_loop", "_timeout")
POOL_PUBLIC = ("from_pool_fill", "release", "close", "wait_closed", "terminate", "size", "maxsize")
# Attributes of aiopg.Connection that _run uses to wait on the readiness callback.
CONNECTION_INTERNALS = ("_create_waiter", "_waiter", "_loop", "_ready", "_weakref")


def test_the_pinned_aiopg_is_the_one_installed():
    assert version("aiopg") == AIOPG_VERSION, (
        "aiopg changed: re-check common/db.py's LeanPool and _run against its pool "
        "and connection code, then update this test"
    )


@pytest.mark.parametrize("name", POOL_INTERNALS + POOL_PUBLIC)
async def test_pool_still_has(db: Database, name: str):
    pool = db.pool
    assert isinstance(pool, aiopg.Pool)
    assert hasattr(pool, name), f"aiopg.Pool has no {name} any more"


async def test_pool_condition_still_keeps_its_waiters(db: Database):
    # LeanPool checks whether aiopg's own path has a task waiting.
    assert hasattr(db.pool._cond, "_waiters")  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", CONNECTION_INTERNALS)
async def test_connection_still_has(db: Database, name: str):
    async with db.connection() as conn:
        assert hasattr(conn, name), f"aiopg.Connection has no {name} any more"


# Methods of aiosmtpd.smtp.SMTP that mta/smtp calls or overrides.
SMTP_METHODS = (
    "_getaddr",
    "_call_handler_hook",
    "_cb_client_connected",
    "_reset_timeout",
    "_set_post_data_state",
    "_timeout_cb",
    "_handle_client",
    "smtp_DATA",
)
# Class attributes protocol_factory and the DATA reader read.
SMTP_CLASS_ATTRIBUTES = ("command_size_limit", "command_size_limits", "line_length_limit")
# Attributes SMTP.__init__ sets that protocol_factory copies or rebinds.
SMTP_INSTANCE_ATTRIBUTES = ("_decode_data", "_smtp_methods", "_auth_methods")
# Module names mta/smtp/protocol.py imports.
SMTP_MODULE_NAMES = ("MISSING", "SMTP", "syntax")


def test_the_pinned_aiosmtpd_is_the_one_installed():
    assert version("aiosmtpd") == AIOSMTPD_VERSION, (
        "aiosmtpd changed: re-check mta/smtp/protocol.py (DATA reader, _getaddr, "
        "protocol_factory) against its SMTP class, then update this test"
    )


@pytest.mark.parametrize("name", SMTP_METHODS + SMTP_CLASS_ATTRIBUTES)
def test_smtp_class_still_has(name: str):
    assert hasattr(aiosmtpd.smtp.SMTP, name), f"aiosmtpd's SMTP has no {name} any more"


@pytest.mark.parametrize("name", SMTP_MODULE_NAMES)
def test_smtp_module_still_has(name: str):
    assert hasattr(aiosmtpd.smtp, name), f"aiosmtpd.smtp has no {name} any more"


async def test_smtp_init_still_sets():
    protocol = aiosmtpd.smtp.SMTP(object(), loop=asyncio.get_running_loop())
    missing = [name for name in SMTP_INSTANCE_ATTRIBUTES if name not in vars(protocol)]
    assert not missing, f"SMTP.__init__ no longer sets {missing}"


async def test_smtp_still_reads_through_reader_and_writer_attributes():
    # The DATA reader uses self._reader / self._writer, which SMTP sets once
    # the connection's streams exist (in _cb_client_connected).
    source = aiosmtpd.smtp.SMTP._cb_client_connected.__code__.co_names
    assert "_reader" in source and "_writer" in source


def test_the_pinned_aiohttp_is_the_one_installed():
    assert version("aiohttp") == AIOHTTP_VERSION, (
        "aiohttp changed: re-check common/outbound.py's guarded connector "
        "(_resolve_host's signature and that every connection resolves through it)"
    )


def test_tcp_connector_still_resolves_through_resolve_host():
    method = aiohttp.TCPConnector._resolve_host
    assert list(inspect.signature(method).parameters)[:4] == ["self", "host", "port", "traces"]
    # _create_direct_connection is where a connection asks for its addresses.
    assert "_resolve_host" in aiohttp.TCPConnector._create_direct_connection.__code__.co_names


# mail/transfers/imap.py over aioimaplib: the client connects to the address the
# SSRF rule checked (create_client overridden, with server_hostname for TLS),
# moves the state after EXAMINE (aioimaplib leaves it at AUTH) and upgrades the
# transport for STARTTLS (aioimaplib sends the command but cannot upgrade).
AIOIMAPLIB_VERSION = "2.0.3"


def test_the_pinned_aioimaplib_is_the_one_installed():
    assert version("aioimaplib") == AIOIMAPLIB_VERSION, (
        "aioimaplib changed: re-check mail/transfers/imap.py (_Client, examine_folder, "
        "_starttls) against its IMAP4 and IMAP4ClientProtocol, then update this test"
    )


def test_aioimaplib_still_has_what_the_transfer_client_uses():
    import aioimaplib
    from aioimaplib.aioimaplib import IMAP4ClientProtocol

    assert "_client_task" in aioimaplib.IMAP4.__annotations__
    params = inspect.signature(aioimaplib.IMAP4.create_client).parameters
    assert list(params) == ["self", "host", "port", "loop", "conn_lost_cb", "ssl_context"]
    for name in ("execute", "new_tag", "simple_command", "capability"):
        assert callable(getattr(IMAP4ClientProtocol, name)), name
    loop = asyncio.new_event_loop()
    try:
        protocol = IMAP4ClientProtocol(loop, None)
        for name in ("state", "capabilities", "transport", "loop"):
            assert hasattr(protocol, name), name
    finally:
        loop.close()
    assert aioimaplib.SELECTED == "SELECTED"
    assert "loop" in inspect.signature(aioimaplib.Command).parameters


async def test_stream_reader_still_keeps_unread_bytes_in_buffer():
    """mta/access/listener.py refuses bytes piped behind STARTTLS by looking at
    ``StreamReader._buffer`` (the plaintext already read, before the handshake)."""
    reader = asyncio.StreamReader()
    reader.feed_data(b"x")
    assert bytes(reader._buffer) == b"x"
