"""An address's folders and activity, read through the mailbox store's facade.

mta owns the mailbox store; mail reaches it only through mta/mailstore.py
(docs/architecture.md, "mail/ and mta/"). Another account's address: 404.
"""

from __future__ import annotations

from mail.addresses.service import owned
from mail.context import MailContext
from mta import mailstore


async def folders(
    ctx: MailContext, account_id: str, address_id: str
) -> tuple[list[mailstore.Folder], tuple[int, int]]:
    """The folders with their counts, and the address's (bytes used, emails)."""
    async with ctx.db.connection() as conn:
        await owned(conn, account_id, address_id)
        rows = await mailstore.folders(conn, address_id, ctx.clock.now())
        return rows, await mailstore.usage(conn, address_id)


async def activity(
    ctx: MailContext,
    account_id: str,
    address_id: str,
    *,
    limit: int,
    offset: int,
    kind: str | None,
) -> tuple[list[mailstore.Activity], int]:
    async with ctx.db.connection() as conn:
        await owned(conn, account_id, address_id)
        return await mailstore.activity_page(
            conn, address_id, limit=limit, offset=offset, kind=kind
        )
