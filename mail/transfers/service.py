"""Transfers as the routes see them: start, list, read, cancel, and the destinations.

A transfer is a row in state ``queued`` when started; a runner
(mail/transfers/runner.py) moves it to ``running`` and on to ``completed``,
``failed`` or ``cancelled``. The source password is sealed before it is
stored (``Sealer(SECRET, "mail.transfers")``) and erased by the statement
that reaches a terminal state.
"""

from __future__ import annotations

from typing import Any

import psycopg2.errors

from common import jobs
from common.crypto import Sealer
from mail.accounts.store import Account
from mail.addresses import service as addresses
from mail.billing import entitlement
from mail.context import MailContext
from mail.errors import conflict, not_found, validation_error
from mail.transfers import store
from mail.transfers.imap import DEFAULT_PORTS, TLS_MODES, is_loopback_name
from mail.transfers.settings import load_transfer_settings
from mail.transfers.store import Destination, Transfer
from mail.web.body import optional_str, required_str
from mail.web.lists import ListParams
from mail.web.ownership import parse_uuid

# The runner's job kinds (registered by mail/service.py through TransferRunner.register).
KICK_JOB = "mail.transfers.kick"
SEAL_PURPOSE = "mail.transfers"
MAX_HOST = 253
MAX_USERNAME = 320
MAX_PASSWORD = 1000


def transfer_sealer(secret: str) -> Sealer:
    return Sealer(secret, SEAL_PURPOSE)


def parse_source(ctx: MailContext, body: dict[str, Any]) -> dict[str, Any]:
    """host, port, tls, username, password from a POST body, checked."""
    host = required_str(body, "host", max_length=MAX_HOST).strip().lower()
    if not host or any(c.isspace() or c in "/@?#" for c in host):
        raise validation_error("host must be a host name or an IP address")
    tls = optional_str(body, "tls", max_length=20, default="implicit")
    if tls not in TLS_MODES:
        raise validation_error(f"tls must be one of {', '.join(TLS_MODES)}")
    port = body.get("port")
    if port is None:
        port = DEFAULT_PORTS[tls]
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise validation_error("port must be an integer from 1 to 65535")
    settings = load_transfer_settings(ctx.settings)
    if tls == "none" and not settings.allow_plaintext and not is_loopback_name(host):
        raise validation_error(
            "tls none sends the password in clear: it is allowed only for a loopback host"
        )
    username = required_str(body, "username", max_length=MAX_USERNAME)
    password = required_str(body, "password", max_length=MAX_PASSWORD)
    return {"host": host, "port": port, "tls": tls, "username": username, "password": password}


async def create(
    ctx: MailContext, account: Account, raw_address_id: object, source: dict[str, Any]
) -> Transfer:
    if not isinstance(raw_address_id, str):
        raise validation_error("address_id must be a string")
    address_id = parse_uuid(raw_address_id, "address")
    now = ctx.clock.now()
    sealed = transfer_sealer(ctx.settings.secret).seal(source["password"])
    try:
        async with ctx.db.transaction() as conn:
            await entitlement.require_feature(conn, account.id, "transfers")
            address = await addresses.owned(conn, account.id, address_id)
            transfer_id = await store.insert(
                conn,
                account_id=account.id,
                address_id=address.id,
                host=source["host"],
                port=source["port"],
                tls=source["tls"],
                username=source["username"],
                password_sealed=sealed,
                now=now,
            )
            # A runner picks it up within a second (the job worker's poll).
            await jobs.enqueue(conn, KICK_JOB, {}, run_at=now, max_attempts=1)
            created = await store.get_owned(conn, account.id, transfer_id)
    except psycopg2.errors.UniqueViolation:
        raise conflict("a transfer into this address is already queued or running") from None
    assert created is not None
    return created


async def get(ctx: MailContext, account: Account, transfer_id: str) -> Transfer:
    async with ctx.db.connection() as conn:
        found = await store.get_owned(conn, account.id, transfer_id)
    if found is None:
        raise not_found("transfer")
    return found


async def list_transfers(
    ctx: MailContext, account: Account, params: ListParams
) -> tuple[list[Transfer], int]:
    async with ctx.db.connection() as conn:
        return await store.page(conn, account.id, params)


async def cancel(ctx: MailContext, account: Account, transfer_id: str) -> Transfer:
    """Cancel a queued or running transfer; its runner stops within a heartbeat (1 s)."""
    async with ctx.db.transaction() as conn:
        found = await store.get_owned(conn, account.id, transfer_id)
        if found is None:
            raise not_found("transfer")
        if not await store.cancel(conn, account.id, transfer_id, ctx.clock.now()):
            raise conflict(f"the transfer is already {found.state}")
        cancelled = await store.get_owned(conn, account.id, transfer_id)
    assert cancelled is not None
    return cancelled


async def destinations(ctx: MailContext, account: Account) -> list[Destination]:
    async with ctx.db.connection() as conn:
        return await store.destinations(conn, account.id)
