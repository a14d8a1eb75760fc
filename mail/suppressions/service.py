"""Suppressions: addresses the account's mail is not sent to.

Stored by mta (the outbound queue consults them before every attempt; hard
bounces and complaints add to them); mail reaches them only through
mta/mailstore.py. A session only: a key never reaches them (mail/apikeys/access.py).
"""

from __future__ import annotations

from mail.accounts.service import normalize_email
from mail.accounts.store import Account
from mail.context import MailContext
from mail.errors import conflict, not_found
from mail.web.lists import ListParams
from mta.mailstore import (
    Suppression,
    add_suppression,
    delete_suppression,
    suppressed,
    suppression_page,
)


async def list_suppressions(
    ctx: MailContext, account: Account, params: ListParams
) -> tuple[list[Suppression], int]:
    async with ctx.db.connection() as conn:
        return await suppression_page(
            conn,
            account.id,
            limit=params.limit,
            offset=params.offset,
            order_by=params.order_by,
            search=params.search,  # mta escapes and wraps it itself
        )


async def add(ctx: MailContext, account: Account, raw_email: str) -> Suppression:
    """Suppress by hand (reason ``manual``); already listed is 409 conflict (the unique index)."""
    email = normalize_email(raw_email)
    async with ctx.db.transaction() as conn:
        if await suppressed(conn, account.id, [email]):
            # Said plainly; the unique index stays the backstop for two at once.
            raise conflict(f"{email} is already suppressed")
        return await add_suppression(conn, account.id, email, "manual", ctx.clock.now())


async def remove(ctx: MailContext, account: Account, suppression_id: str) -> None:
    """Mail passes to the address again (the spec's state table)."""
    async with ctx.db.transaction() as conn:
        if not await delete_suppression(conn, account.id, suppression_id):
            raise not_found("suppression")
