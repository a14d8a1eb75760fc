"""API keys: minting (the token is shown once), checking, listing, revoking.

A token is ``re_<lookup>_<secret>``: Resend's ``re_`` prefix, so tools that
expect a Resend key take ours; ``lookup`` (8 hex characters) finds the row
and the SHA-256 of the whole token, compared in constant time, proves it.
The token itself is never stored and never logged.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from common.crypto import constant_time_equals, sha256_hex
from mail.accounts.store import Account
from mail.apikeys import store
from mail.apikeys.store import ApiKey, StoredKey
from mail.billing import entitlement
from mail.context import MailContext
from mail.domains import service as domains
from mail.errors import not_found, validation_error
from mail.web.lists import ListParams
from mail.web.ownership import parse_uuid

TOKEN_PREFIX = "re_"
LOOKUP_CHARS = 8
PERMISSIONS = ("full_access", "sending_access")
MAX_NAME = 50
MAX_TOKEN = 200
# last_used_at is written at most this often per key, not on every request.
TOUCH_EVERY = timedelta(seconds=60)


def mint() -> tuple[str, str]:
    """A new token and its lookup part."""
    lookup = secrets.token_hex(LOOKUP_CHARS // 2)
    return f"{TOKEN_PREFIX}{lookup}_{secrets.token_urlsafe(24)}", lookup


def lookup_of(token: str) -> str | None:
    head = len(TOKEN_PREFIX) + LOOKUP_CHARS
    if (
        len(token) > MAX_TOKEN
        or not token.startswith(TOKEN_PREFIX)
        or token[head : head + 1] != "_"
    ):
        return None
    return token[len(TOKEN_PREFIX) : head]


async def authenticate(ctx: MailContext, token: str) -> StoredKey | None:
    """The live key named by ``token`` and its account, or None."""
    lookup = lookup_of(token)
    if lookup is None:
        return None
    now = ctx.clock.now()
    async with ctx.db.connection() as conn:
        found = await store.by_lookup(conn, lookup)
        if found is None or not constant_time_equals(found.token_hash, sha256_hex(token)):
            return None
        last = found.key.last_used_at
        if last is None or now - last >= TOUCH_EVERY:
            await store.touch(conn, found.key.id, now)
    return found


def parse_name(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise validation_error("name must be a non-empty string")
    name = value.strip()
    if len(name) > MAX_NAME:
        raise validation_error(f"name must be at most {MAX_NAME} characters")
    return name


def parse_permission(value: object) -> str:
    if value is None:
        return "full_access"  # Resend's default
    if value not in PERMISSIONS:
        raise validation_error('permission must be "full_access" or "sending_access"')
    return str(value)


async def create(
    ctx: MailContext, account: Account, *, name: str, permission: str, domain_id: object
) -> tuple[ApiKey, str]:
    """The new key and its token (the only time the token exists outside the caller)."""
    if domain_id is not None:
        if not isinstance(domain_id, str):
            raise validation_error("domain_id must be a string")
        if permission != "sending_access":
            # As at Resend: only a sending key is held to one domain.
            raise validation_error("domain_id can only be given with sending_access")
    token, lookup = mint()
    async with ctx.db.transaction() as conn:
        await entitlement.require_feature(conn, account.id, "api_sending")
        await entitlement.reserve(conn, account.id, "api_keys", now=ctx.clock.now())
        restricted = None
        if domain_id is not None:
            restricted = (await domains.owned(conn, account.id, parse_uuid(domain_id, "domain"))).id
        key_id = await store.insert(
            conn,
            account_id=account.id,
            name=name,
            permission=permission,
            domain_id=restricted,
            lookup=lookup,
            token_hash=sha256_hex(token),
            now=ctx.clock.now(),
        )
        key = await store.get_owned(conn, account.id, key_id)
    assert key is not None
    return key, token


async def list_keys(
    ctx: MailContext, account: Account, params: ListParams
) -> tuple[list[ApiKey], int]:
    async with ctx.db.connection() as conn:
        return await store.page(conn, account.id, params)


async def revoke(ctx: MailContext, account: Account, key_id: str) -> None:
    """Delete the key: its next request is 403 invalid_api_key, in every process."""
    async with ctx.db.transaction() as conn:
        if not await store.delete(conn, account.id, key_id):
            raise not_found("api key")
