"""Signing in and out, and two-factor enrolment.

Login does the same argon2 verification whether or not the address has an
account (common.passwords.verify_password(None, ...) checks against a dummy
hash), and replies with the same body and status, so neither the reply nor
its timing says which addresses exist.
"""

from __future__ import annotations

from aiohttp import web

from common.passwords import verify_password
from mail.accounts import store as accounts_store
from mail.accounts.service import confirm_password, update_with_notice
from mail.accounts.store import Account
from mail.auth import sessions, totp
from mail.auth.store import Session
from mail.context import MailContext
from mail.errors import (
    MailError,
    conflict,
    missing_required_field,
    not_found,
    rate_limit_exceeded,
    unauthorized,
    validation_error,
)
from mail.web.lists import ListParams

INVALID_LOGIN = "invalid email or password"
INVALID_TOTP = "invalid two-factor code"
# Wrong TOTP codes allowed per account per window, on top of the per-IP limit.
TOTP_ATTEMPTS = 5
TOTP_WINDOW_SECONDS = 60


async def login(
    ctx: MailContext, request: web.Request, email: str, password: str, totp_code: str | None
) -> tuple[Account, str]:
    """Check the credentials; return the account and a new session token."""
    async with ctx.db.connection() as conn:
        account = await accounts_store.get_by_email(conn, email.strip().lower())
    # Exactly one verification on every path: a dummy hash stands in for a missing account.
    valid = await verify_password(account.password_hash if account else None, password)
    if account is None or not valid:
        raise unauthorized(INVALID_LOGIN)
    if account.totp_enabled:
        if not totp_code:
            raise missing_required_field("totp_code")
        await check_totp(ctx, account, totp_code, unauthorized(INVALID_TOTP))
    async with ctx.db.connection() as conn:
        token = await sessions.PANEL.start(conn, ctx, request, account.id)
    return account, token


async def check_totp(ctx: MailContext, account: Account, code: str, refusal: MailError) -> None:
    """Accept a current, unused code of the enabled secret, or raise ``refusal``."""
    assert account.totp_secret is not None
    await _spend_totp_attempt(ctx, account)
    secret = ctx.totp_sealer.open(account.totp_secret)
    step = totp.matching_step(secret, code, ctx.clock.now())
    async with ctx.db.connection() as conn:
        if step is None or not await accounts_store.advance_totp_step(conn, account.id, step):
            raise refusal


async def _spend_totp_attempt(ctx: MailContext, account: Account) -> None:
    # A 6-digit code must not be guessable by spreading attempts across IPs.
    decision = await ctx.limiter.hit(f"mail:totp:{account.id}", TOTP_ATTEMPTS, TOTP_WINDOW_SECONDS)
    if not decision.allowed:
        raise rate_limit_exceeded(decision.headers())


async def logout(ctx: MailContext, session_id: str) -> None:
    async with ctx.db.connection() as conn:
        await sessions.store.delete(conn, session_id)


async def live_sessions(
    ctx: MailContext, account: Account, params: ListParams
) -> tuple[list[Session], int]:
    async with ctx.db.connection() as conn:
        return await sessions.store.list_live(conn, account.id, ctx.clock.now(), params)


async def revoke_others(ctx: MailContext, account: Account, current_id: str) -> int:
    """Sign out every other session of the account; how many there were."""
    async with ctx.db.connection() as conn:
        return await sessions.store.delete_all_except(conn, account.id, current_id)


async def revoke(ctx: MailContext, account: Account, session_id: str) -> None:
    """Sign out one session of the account; 404 for another account's or a missing one."""
    async with ctx.db.connection() as conn:
        if not await sessions.store.delete_owned(conn, account.id, session_id):
            raise not_found("session")


async def totp_setup(ctx: MailContext, account: Account) -> tuple[str, str]:
    """A fresh pending secret and its otpauth:// URI; enabling confirms it."""
    if account.totp_enabled:
        raise conflict("two-factor authentication is already enabled")
    secret = totp.new_secret()
    async with ctx.db.connection() as conn:
        await accounts_store.update(
            conn, account.id, ctx.clock.now(), totp_pending_secret=ctx.totp_sealer.seal(secret)
        )
    return secret, totp.provisioning_uri(secret, account.email, ctx.config.totp_issuer)


def pending_totp_uri(ctx: MailContext, account: Account) -> str | None:
    """The otpauth:// URI of the enrolment under way (for its QR code), or None."""
    if account.totp_enabled or account.totp_pending_secret is None:
        return None
    secret = ctx.totp_sealer.open(account.totp_pending_secret)
    return totp.provisioning_uri(secret, account.email, ctx.config.totp_issuer)


async def totp_enable(ctx: MailContext, account: Account, code: str) -> Account:
    if account.totp_enabled:
        raise conflict("two-factor authentication is already enabled")
    if account.totp_pending_secret is None:
        raise conflict("start with POST /api/auth/totp/setup")
    await _spend_totp_attempt(ctx, account)
    secret = ctx.totp_sealer.open(account.totp_pending_secret)
    step = totp.matching_step(secret, code, ctx.clock.now())
    if step is None:
        raise validation_error("code is incorrect")
    now = ctx.clock.now()
    return await update_with_notice(
        ctx,
        account,
        "two-factor authentication was enabled",
        totp_secret=account.totp_pending_secret,
        totp_pending_secret=None,
        totp_enabled_at=now,
        totp_last_step=step,
    )


async def totp_disable(ctx: MailContext, account: Account, password: str) -> Account:
    if not account.totp_enabled:
        raise conflict("two-factor authentication is not enabled")
    await confirm_password(account, password)
    return await update_with_notice(
        ctx,
        account,
        "two-factor authentication was disabled",
        totp_secret=None,
        totp_pending_secret=None,
        totp_enabled_at=None,
    )
