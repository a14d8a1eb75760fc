"""One IMAP daemon (and one database) for a whole test module.

A module whose tests each work in their own mailboxes imports these fixtures
and runs in one event loop:

    pytestmark = pytest.mark.asyncio(loop_scope="module")
    from tests.mta.imap.shared import module_alice, module_imap  # noqa: F401

Each test then gets a mailbox of its own (a fresh domain: ``alice@<random>.test``)
on a daemon started once, instead of a database cloned and a daemon started
per test. What would leak between tests is left out on purpose: failed
sign-ins (the per-IP budget is the client address's, 127.0.0.1 for all) and
the clock (never moved here) belong in modules with a daemon per test.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from common.clock import ManualClock
from common.db import Database
from common.jobs import JobQueue
from common.runtime import Runtime
from mta.context import MtaContext
from mta.imap import server as imap_server
from mta.smtp import server as smtp_server
from tests.conftest import harness_settings
from tests.mta.conftest import mta_settings, mta_test_config
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.imap.conftest import Imap, Mailbox, imap_test_config
from tests.mta.jmap.conftest import make_mailbox


@pytest_asyncio.fixture(name="imap", scope="module", loop_scope="module")
async def module_imap(
    module_database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Imap]:
    data_dir: Path = tmp_path_factory.mktemp("imap")
    dns = LoopbackDNS().start()
    db = await Database.connect(module_database_url, size=5)
    try:
        clock = ManualClock()
        runtime = Runtime(
            settings=mta_settings(harness_settings(module_database_url, data_dir)),
            db=db,
            clock=clock,
            jobs=JobQueue(db, clock),
        )
        ctx = MtaContext.build(runtime, imap_test_config(mta_test_config(dns)))
        async with imap_server.serve(ctx) as servers:
            plain, tls = imap_server.bound_ports(servers)
            yield Imap(plain, tls, ctx)
    finally:
        await db.close()
        dns.stop()


@pytest.fixture(name="db")
def module_db(imap: Imap) -> Database:
    """The module's database (the one the daemon serves)."""
    return imap.ctx.runtime.db


@pytest_asyncio.fixture(name="smtp", scope="module", loop_scope="module")
async def module_smtp(imap: Imap) -> AsyncIterator[int]:
    """The inbound SMTP daemon of the same store, once for the module too."""
    async with smtp_server.serve(imap.ctx) as srv:
        yield smtp_server.bound_port(srv)


async def own_mailbox(imap: Imap, local: str) -> Mailbox:
    """A mailbox no other test of the module has: its own domain."""
    return await make_mailbox(imap.ctx.runtime.db, f"{local}@{secrets.token_hex(4)}.test")


@pytest_asyncio.fixture(name="alice", loop_scope="module")
async def module_alice(imap: Imap) -> Mailbox:
    return await own_mailbox(imap, "alice")


@pytest_asyncio.fixture(name="bob", loop_scope="module")
async def module_bob(imap: Imap) -> Mailbox:
    return await own_mailbox(imap, "bob")


__all__ = ["module_alice", "module_bob", "module_db", "module_imap", "module_smtp", "own_mailbox"]
