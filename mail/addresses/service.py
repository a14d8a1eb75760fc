"""Addresses: create (with its default folders), edit, password, recovery, delete.

Every operation takes the context first and the signed-in account's id; an
address is reached through its domain's owner, so another account's address
answers 404 like a missing one. The handlers in routes.py parse the fields.
"""

from __future__ import annotations

from typing import Any

from common.db import Conn
from common.passwords import hash_password
from mail.addresses import store
from mail.addresses.store import Address
from mail.addresses.webmail_sessions import end_webmail_sessions
from mail.billing import entitlement
from mail.context import MailContext
from mail.domains import service as domains
from mail.errors import conflict, validation_error
from mail.web.lists import ListParams
from mail.web.ownership import found
from mail.webhooks import emit
from mta import mailstore


async def owned(
    conn: Conn, account_id: str, address_id: str, *, for_update: bool = False
) -> Address:
    """The address if this account owns its domain; 404 otherwise."""
    return found(
        await store.get_owned(conn, account_id, address_id, for_update=for_update), "address"
    )


async def list_addresses(
    ctx: MailContext, account_id: str, domain_id: str, params: ListParams
) -> tuple[list[Address], int]:
    async with ctx.db.connection() as conn:
        domain = await domains.owned(conn, account_id, domain_id)
        return await store.list_for_domain(conn, domain.id, params)


async def all_of_account(ctx: MailContext, account_id: str) -> list[Address]:
    """Every address the account owns, across its domains: what an address picker offers."""
    async with ctx.db.connection() as conn:
        return await store.for_account(conn, account_id)


async def create(
    ctx: MailContext,
    account_id: str,
    domain_id: str,
    *,
    local_part: str,
    password: str,
    display_name: str,
    quota_bytes: int | None,
    recovery_email: str | None,
) -> Address:
    """A new address on the domain, with its Inbox, Drafts, Sent... in the same transaction.

    ``quota_bytes`` None takes the domain's default.
    """
    async with ctx.db.connection() as conn:
        # Check before the slow hash, so a wrong domain answers at once.
        await domains.owned(conn, account_id, domain_id)
    password_hash = await hash_password(password)
    now = ctx.clock.now()
    async with ctx.db.transaction() as conn:
        domain = await domains.owned(conn, account_id, domain_id, for_update=True)
        await entitlement.reserve(conn, account_id, "addresses", now=now)
        if await store.exists(conn, domain_id, local_part):
            raise conflict(f"{local_part}@{domain.name} already exists")
        address_id = await store.insert(
            conn,
            domain_id=domain_id,
            local_part=local_part,
            display_name=display_name,
            password_hash=password_hash,
            quota_bytes=domain.default_quota_bytes if quota_bytes is None else quota_bytes,
            recovery_email=recovery_email,
            now=now,
        )
        # Inbox, Drafts, Sent... exist from the start (the mailbox store's defaults).
        await mailstore.create_default_mailboxes(conn, address_id, now)
        row = await store.get(conn, address_id)
        assert row is not None
        await emit.address_event(conn, "address.created", row, now)
    return row


async def get(ctx: MailContext, account_id: str, address_id: str) -> Address:
    async with ctx.db.connection() as conn:
        return await owned(conn, account_id, address_id)


async def update(
    ctx: MailContext, account_id: str, address_id: str, changes: dict[str, Any]
) -> Address:
    async with ctx.db.transaction() as conn:
        row = await owned(conn, account_id, address_id, for_update=True)
        # Over the plan's addresses after a downgrade: they are read-only.
        await entitlement.require_within(conn, account_id, "addresses", now=ctx.clock.now())
        await store.update(conn, row.id, changes, ctx.clock.now())
        updated = await store.get(conn, row.id)
        assert updated is not None
        if set(changes) - {"password_hash"}:
            # A password change is not news for webhooks (it carries nothing to tell).
            await emit.address_event(conn, "address.updated", updated, ctx.clock.now())
    return updated


async def delete(ctx: MailContext, account_id: str, address_id: str) -> None:
    # Its mailboxes, messages and their rows in schema mta cascade in this statement.
    async with ctx.db.transaction() as conn:
        row = await owned(conn, account_id, address_id, for_update=True)
        await emit.address_event(conn, "address.deleted", row, ctx.clock.now())
        await store.delete(conn, row.id)


async def change_password(
    ctx: MailContext, account_id: str, address_id: str, password: str
) -> Address:
    async with ctx.db.connection() as conn:
        # Check before the slow hash, so a wrong address answers at once.
        await owned(conn, account_id, address_id)
    password_hash = await hash_password(password)
    updated = await update(ctx, account_id, address_id, {"password_hash": password_hash})
    # A new password signs the mailbox out of webmail everywhere.
    async with ctx.db.connection() as conn:
        await end_webmail_sessions(conn, address_id, ctx.clock.now())
    return updated


async def set_recovery(
    ctx: MailContext, account_id: str, address_id: str, recovery_email: str | None
) -> Address:
    async with ctx.db.transaction() as conn:
        row = await owned(conn, account_id, address_id, for_update=True)
        if recovery_email is not None and recovery_email == row.email:
            raise validation_error("the recovery address must be another mailbox than this one")
        await store.update(conn, row.id, {"recovery_email": recovery_email}, ctx.clock.now())
        updated = await store.get(conn, row.id)
        assert updated is not None
        await emit.address_event(conn, "address.updated", updated, ctx.clock.now())
    return updated
