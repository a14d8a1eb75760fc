"""One-time tokens for email verification and password reset.

Random (256 bits), stored only as SHA-256 hex, single use (redeemed by one
conditional UPDATE) and expiring: 24 hours to verify an address, 1 hour to
reset a password.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from common.crypto import sha256_hex
from common.db import Conn
from common.ids import random_id
from mail.accounts import store
from mail.context import MailContext
from mail.errors import validation_error

VERIFY_EMAIL = "verify_email"
PASSWORD_RESET = "password_reset"
LIFETIME = {VERIFY_EMAIL: timedelta(hours=24), PASSWORD_RESET: timedelta(hours=1)}
MAX_TOKEN_LENGTH = 200


async def issue(
    conn: Conn, ctx: MailContext, account_id: str, kind: str, data: dict[str, Any] | None = None
) -> str:
    """A new token of ``kind``; earlier unused ones of that kind stop working."""
    now = ctx.clock.now()
    await store.void_tokens(conn, account_id, kind, now)
    token = random_id()
    await store.insert_token(
        conn,
        account_id=account_id,
        kind=kind,
        token_hash=sha256_hex(token),
        data=data or {},
        now=now,
        expires_at=now + LIFETIME[kind],
    )
    return token


async def redeem(conn: Conn, ctx: MailContext, kind: str, token: str) -> store.RedeemedToken:
    """Use the token once; unknown, used and expired tokens are refused alike."""
    row = None
    if len(token) <= MAX_TOKEN_LENGTH:
        row = await store.redeem_token(
            conn, kind=kind, token_hash=sha256_hex(token), now=ctx.clock.now()
        )
    if row is None:
        raise validation_error("token is invalid, used or expired")
    return row


def link(ctx: MailContext, page: str, token: str) -> str:
    return f"{ctx.settings.public_url}/{page}?token={token}"
