"""Account logic: sign-up, profile, verification, password changes, referrals.

Handlers parse and shape; these functions do the work inside transactions.
Password hashing (slow, off the event loop) always happens before a
transaction opens, so no connection is held while it runs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from email_validator import EmailNotValidError, validate_email

from common.db import Conn
from common.ids import short_id
from common.jobs import Job
from common.passwords import hash_password, verify_password
from mail.accounts import store, tokens
from mail.accounts.store import Account
from mail.auth import sessions
from mail.auth import store as sessions_store
from mail.context import MailContext
from mail.errors import conflict, forbidden, validation_error
from mail.outbox import messages
from mail.outbox.service import send

log = logging.getLogger(__name__)

MIN_PASSWORD = 8
MAX_PASSWORD = 256
MAX_NAME = 100
MAX_EMAIL = 254
FORGOT_JOB = "mail.password_forgot"

# Preferences for optional mail; security notices are always sent.
NOTIFICATION_DEFAULTS: dict[str, bool] = {
    "dns_alerts": True,
    "quota_alerts": True,
    "billing": True,
    "product_news": False,
}


def normalize_email(raw: str) -> str:
    if len(raw) > MAX_EMAIL:
        raise validation_error(f"email must be at most {MAX_EMAIL} characters")
    try:
        checked = validate_email(raw, check_deliverability=False)
    except EmailNotValidError as exc:
        raise validation_error(f"email is not valid: {exc}") from None
    return checked.normalized.lower()


def check_new_password(password: str, field: str = "password") -> None:
    if len(password) < MIN_PASSWORD:
        raise validation_error(f"{field} must be at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise validation_error(f"{field} must be at most {MAX_PASSWORD} characters")


async def confirm_password(account: Account, password: str) -> None:
    """Re-authentication for sensitive changes: 403 forbidden when wrong."""
    if not await verify_password(account.password_hash, password):
        raise forbidden("password is incorrect")


def notifications_of(account: Account) -> dict[str, bool]:
    return {**NOTIFICATION_DEFAULTS, **account.notifications}


# --- sign-up -------------------------------------------------------------


@dataclass(frozen=True)
class SignupStatus:
    open: bool
    first_account: bool


async def signup_status(conn: Conn, ctx: MailContext) -> SignupStatus:
    first = not await store.any_account(conn)
    return SignupStatus(open=first or ctx.config.signups_enabled, first_account=first)


async def signups(ctx: MailContext) -> SignupStatus:
    async with ctx.db.connection() as conn:
        return await signup_status(conn, ctx)


async def signup(
    ctx: MailContext,
    request: web.Request,
    *,
    email: str,
    password: str,
    name: str,
    referral_code: str | None,
) -> tuple[Account, str]:
    """The new account, signed in: the account and its session cookie value."""
    password_hash = await hash_password(password)
    async with ctx.db.transaction() as conn:
        account = await _create_account(
            conn,
            ctx,
            email=email,
            password_hash=password_hash,
            name=name,
            referral_code=referral_code,
        )
        return account, await sessions.PANEL.start(conn, ctx, request, account.id)


async def _create_account(
    conn: Conn,
    ctx: MailContext,
    *,
    email: str,
    password_hash: str,
    name: str,
    referral_code: str | None,
) -> Account:
    """Create the account (the first one owns the instance) and mail a verification.

    Runs in the caller's transaction; the advisory lock makes 'first' exact.
    """
    await store.lock_signups(conn)
    status = await signup_status(conn, ctx)
    if not status.open:
        raise forbidden("signups are closed on this instance")
    referrer = await store.get_by_referral_code(conn, referral_code) if referral_code else None
    if await store.get_by_email(conn, email) is not None:
        raise conflict("an account with this email already exists")
    account = await store.insert(
        conn,
        email=email,
        name=name,
        password_hash=password_hash,
        is_owner=status.first_account,
        referral_code=short_id(),
        referred_by=referrer.id if referrer else None,
        notifications={},
        now=ctx.clock.now(),
    )
    await send_verification(conn, ctx, account)
    return account


# --- email verification --------------------------------------------------


async def send_verification(
    conn: Conn, ctx: MailContext, account: Account, new_email: str | None = None
) -> None:
    """Mail a verification link, to ``new_email`` for an email change."""
    to = new_email or account.email
    token = await tokens.issue(conn, ctx, account.id, tokens.VERIFY_EMAIL, {"email": to})
    link = tokens.link(ctx, "verify-email", token)
    await send(
        conn,
        ctx,
        messages.verification(to, link, change=new_email is not None),
        account_id=account.id,
    )


async def resend_verification(ctx: MailContext, account: Account) -> None:
    if account.email_verified_at is not None:
        raise conflict("the email address is already verified")
    async with ctx.db.transaction() as conn:
        await send_verification(conn, ctx, account)


async def verify_email(ctx: MailContext, token: str) -> Account:
    """Redeem a verification token; for an email change the address switches now."""
    async with ctx.db.transaction() as conn:
        return await _verify_email(conn, ctx, token)


async def _verify_email(conn: Conn, ctx: MailContext, token: str) -> Account:
    row = await tokens.redeem(conn, ctx, tokens.VERIFY_EMAIL, token)
    account = await store.get(conn, row.account_id)
    if account is None:
        raise validation_error("token is invalid, used or expired")
    email = row.data.get("email", account.email)
    if email != account.email:
        if await store.get_by_email(conn, email) is not None:
            raise conflict("an account with this email already exists")
        await send(
            conn,
            ctx,
            messages.security_notice(account.email, f"the email address changed to {email}"),
            account_id=account.id,
        )
    elif account.email_verified_at is not None:
        return account
    updated = await store.update(
        conn, account.id, ctx.clock.now(), email=email, email_verified_at=ctx.clock.now()
    )
    assert updated is not None
    return updated


async def change_email(ctx: MailContext, account: Account, new_email: str, password: str) -> None:
    """Start an email change: the new address takes over once it is verified."""
    await confirm_password(account, password)
    async with ctx.db.transaction() as conn:
        if new_email == account.email:
            raise validation_error("email is already the account's address")
        if await store.get_by_email(conn, new_email) is not None:
            raise conflict("an account with this email already exists")
        await send_verification(conn, ctx, account, new_email=new_email)
        await send(
            conn,
            ctx,
            messages.security_notice(
                account.email, f"a change of email address to {new_email} was requested"
            ),
            account_id=account.id,
        )


def referral_url(ctx: MailContext, account: Account) -> str:
    """The sign-up link that credits the account (the sign-up page sends ``ref``)."""
    return f"{ctx.settings.public_url}/signup?ref={account.referral_code}"


async def referral_counts(ctx: MailContext, account: Account) -> tuple[int, int]:
    """How many signed up with the account's referral code, and how many of them verified."""
    async with ctx.db.connection() as conn:
        return await store.referral_counts(conn, account.id)


# --- passwords -----------------------------------------------------------


async def request_reset(ctx: MailContext, email: str) -> None:
    """The forgot-password reply does this same work whatever the address.

    The lookup and the mail happen in a job, so the reply's time cannot tell
    whether the address has an account.
    """
    await ctx.runtime.jobs.enqueue(FORGOT_JOB, {"email": email}, max_attempts=3)


async def run_forgot_job(ctx: MailContext, job: Job) -> None:
    email = str(job.payload.get("email", ""))
    async with ctx.db.transaction() as conn:
        account = await store.get_by_email(conn, email)
        if account is None:
            return
        token = await tokens.issue(conn, ctx, account.id, tokens.PASSWORD_RESET)
        link = tokens.link(ctx, "reset-password", token)
        await send(conn, ctx, messages.password_reset(account.email, link), account_id=account.id)


async def reset_password(ctx: MailContext, token: str, password: str) -> None:
    """Redeem a reset token: new password, every session ends, a notice goes out."""
    check_new_password(password)
    password_hash = await hash_password(password)
    async with ctx.db.transaction() as conn:
        row = await tokens.redeem(conn, ctx, tokens.PASSWORD_RESET, token)
        account = await store.update(
            conn, row.account_id, ctx.clock.now(), password_hash=password_hash
        )
        if account is None:
            raise validation_error("token is invalid, used or expired")
        await store.void_tokens(conn, account.id, tokens.PASSWORD_RESET, ctx.clock.now())
        await sessions_store.delete_all_except(conn, account.id, None)
        await send(
            conn,
            ctx,
            messages.security_notice(account.email, "the password was reset"),
            account_id=account.id,
        )


async def change_password(
    ctx: MailContext, account: Account, session_id: str | None, current: str, new: str
) -> None:
    """Change the password; every other session ends, this one stays."""
    check_new_password(new, "new_password")
    await confirm_password(account, current)
    password_hash = await hash_password(new)
    async with ctx.db.transaction() as conn:
        await store.update(conn, account.id, ctx.clock.now(), password_hash=password_hash)
        await sessions_store.delete_all_except(conn, account.id, session_id)
        await send(
            conn,
            ctx,
            messages.security_notice(account.email, "the password was changed"),
            account_id=account.id,
        )


# --- profile, preferences, deletion ---------------------------------------


async def update_with_notice(
    ctx: MailContext, account: Account, notice: str, **values: Any
) -> Account:
    """Update the account and mail it a security notice, in one transaction."""
    async with ctx.db.transaction() as conn:
        updated = await store.update(conn, account.id, ctx.clock.now(), **values)
        await send(
            conn, ctx, messages.security_notice(account.email, notice), account_id=account.id
        )
    assert updated is not None
    return updated


async def update_profile(ctx: MailContext, account: Account, changes: dict[str, Any]) -> Account:
    if not changes:
        return account
    async with ctx.db.connection() as conn:
        updated = await store.update(conn, account.id, ctx.clock.now(), **changes)
    assert updated is not None
    return updated


async def update_notifications(
    ctx: MailContext, account: Account, changes: dict[str, bool]
) -> dict[str, bool]:
    merged = {**account.notifications, **changes}
    async with ctx.db.connection() as conn:
        updated = await store.update(conn, account.id, ctx.clock.now(), notifications=merged)
    assert updated is not None
    return notifications_of(updated)


async def delete_account(ctx: MailContext, account: Account, password: str) -> None:
    """Delete the account and, by ON DELETE CASCADE, everything it owns."""
    await confirm_password(account, password)
    async with ctx.db.transaction() as conn:
        if account.is_owner and await store.count_others(conn, account.id) > 0:
            raise forbidden("the instance owner cannot be deleted while other accounts exist")
        await send(
            conn,
            ctx,
            messages.security_notice(account.email, "the account was deleted"),
            account_id=None,
        )
        await store.delete(conn, account.id)
