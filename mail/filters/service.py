"""Sieve filters of the panel: field checks, compiling, and the operations the routes call.

Filters are stored and run by mta (the mailbox store); mail reaches them only
through mta/mailstore.py. Operations take the context first and the signed-in
account; another account's filter or address answers 404 like a missing one.
"""

from __future__ import annotations

from typing import Any

from common.db import Conn
from mail.accounts.store import Account
from mail.addresses import service as addresses
from mail.addresses.store import Address
from mail.billing import entitlement
from mail.context import MailContext
from mail.errors import validation_error
from mail.web.body import optional_str, required_str
from mail.web.lists import ListParams
from mail.web.ownership import owned, parse_uuid
from mta.mailstore import (
    MAX_SCRIPT_BYTES,
    Filter,
    Script,
    SieveError,
    compile_script,
    delete_filter,
    filter_page,
    get_filter,
    insert_filter,
    update_filter,
)

MAX_NAME = 200
MAX_POSITION = 1_000_000


def compile_or_400(text: str) -> Script:
    """The compiled script, or 400 validation_error naming the line (``line 3: ...``)."""
    try:
        return compile_script(text)
    except SieveError as exc:
        raise validation_error(f"script does not compile: {exc}") from None


def script_field(body: dict[str, Any], *, required: bool) -> str | None:
    getter = required_str if required else optional_str
    return getter(body, "script", max_length=MAX_SCRIPT_BYTES)


def name_field(body: dict[str, Any], *, required: bool) -> str | None:
    value = (required_str if required else optional_str)(body, "name", max_length=MAX_NAME)
    if value is not None and not value.strip():
        raise validation_error("name must not be blank")
    return value.strip() if value is not None else None


def position_field(body: dict[str, Any]) -> int | None:
    value = body.get("position")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_POSITION:
        raise validation_error(f"position must be an integer from 0 to {MAX_POSITION}")
    return value


async def owned_address(conn: Conn, account: Account, raw_id: object) -> Address:
    """The address ``raw_id`` (a body or query value) if this account owns it; else 404."""
    if not isinstance(raw_id, str):
        raise validation_error("address_id must be a string")
    return await addresses.owned(conn, account.id, parse_uuid(raw_id, "address"))


async def list_filters(
    ctx: MailContext, account: Account, params: ListParams, raw_address_id: str | None
) -> tuple[list[Filter], int]:
    """A page of the account's filters; of one address when ``raw_address_id`` is given."""
    async with ctx.db.connection() as conn:
        address_id = None
        if raw_address_id:
            address_id = (await owned_address(conn, account, raw_address_id)).id
        return await filter_page(
            conn,
            account.id,
            order_by=params.order_by,
            limit=params.limit,
            offset=params.offset,
            search=params.search_pattern,
            address_id=address_id,
        )


async def create(
    ctx: MailContext,
    account: Account,
    *,
    raw_address_id: object,
    name: str,
    script: str,
    enabled: bool | None,
    position: int | None,
) -> Filter:
    async with ctx.db.transaction() as conn:
        await entitlement.require_feature(conn, account.id, "filters")
        address = await owned_address(conn, account, raw_address_id)
        return await insert_filter(
            conn,
            account_id=account.id,
            address_id=address.id,
            name=name,
            script=script,
            enabled=True if enabled is None else enabled,
            position=position or 0,
            now=ctx.clock.now(),
        )


async def get(ctx: MailContext, account: Account, filter_id: str) -> Filter:
    async with ctx.db.connection() as conn:
        return owned(await get_filter(conn, filter_id), account, "filter")


async def update(
    ctx: MailContext,
    account: Account,
    filter_id: str,
    fields: dict[str, object],
    raw_address_id: object,
) -> Filter:
    """Change the parsed ``fields``; move the filter when ``raw_address_id`` is not None."""
    async with ctx.db.transaction() as conn:
        owned(await get_filter(conn, filter_id), account, "filter")
        if raw_address_id is not None:
            address = await owned_address(conn, account, raw_address_id)
            fields["address_id"] = address.id
        row = await update_filter(conn, filter_id, fields, ctx.clock.now())
    assert row is not None
    return row


async def delete(ctx: MailContext, account: Account, filter_id: str) -> None:
    async with ctx.db.transaction() as conn:
        owned(await get_filter(conn, filter_id), account, "filter")
        await delete_filter(conn, filter_id)
