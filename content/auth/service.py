"""Sign-in and sessions: tokens are random, stored only as SHA-256, revocable."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from common.crypto import sha256_hex
from common.ids import random_id
from common.passwords import verify_password
from content.auth import store
from content.auth.store import Session
from content.context import Context
from content.errors import Forbidden, RateLimited, Unauthorized
from content.people import store as people_store
from content.people.store import Person

SESSION_LIFETIME = timedelta(days=30)
# Per client IP: 10 sign-in attempts per 15 minutes, shared by every process.
LOGIN_LIMIT = 10
LOGIN_WINDOW_SECONDS = 15 * 60
# Re-entering the password to mint a key: the same budget per account.
REAUTH_LIMIT = 10


@dataclass(frozen=True)
class NewSession:
    token: str
    session_id: int
    expires_at: datetime
    user: Person


async def limit_login(ctx: Context, ip: str) -> None:
    decision = await ctx.limiter.hit(f"cms:login-ip:{ip}", LOGIN_LIMIT, LOGIN_WINDOW_SECONDS)
    if not decision.allowed:
        raise RateLimited(
            f"too many sign-in attempts; try again in {decision.retry_after} seconds",
            decision.headers(),
        )


async def start_session(ctx: Context, user: Person, *, ip: str, user_agent: str) -> NewSession:
    token = random_id()
    now = ctx.clock.now()
    expires_at = now + SESSION_LIFETIME
    async with ctx.db.connection() as conn:
        session_id = await store.insert_session(
            conn,
            token_hash=sha256_hex(token),
            user_id=user.id,
            now=now,
            expires_at=expires_at,
            ip=ip,
            user_agent=user_agent,
        )
    return NewSession(token=token, session_id=session_id, expires_at=expires_at, user=user)


async def live_sessions(ctx: Context, user_id: str) -> list[Session]:
    """The person's sessions that are neither revoked nor expired, newest first."""
    async with ctx.db.connection() as conn:
        return await store.live_sessions(conn, user_id, ctx.clock.now())


async def end_session(ctx: Context, user_id: str, session_id: int) -> bool:
    """Revoke one of the person's live sessions; False when they have no such session."""
    async with ctx.db.connection() as conn:
        return await store.revoke_session(conn, session_id, user_id, ctx.clock.now())


async def sign_in(
    ctx: Context, email: str, password: str, *, ip: str, user_agent: str
) -> NewSession:
    await limit_login(ctx, ip)
    async with ctx.db.connection() as conn:
        login = await people_store.get_login(conn, email)
    # verify_password does the same work for an unknown email.
    ok = await verify_password(login.password_hash if login else None, password)
    if login is None or not ok:
        raise Unauthorized("wrong email or password", "INVALID_CREDENTIALS")
    return await start_session(ctx, login.person, ip=ip, user_agent=user_agent)


async def confirm_password(
    ctx: Context, user_id: str, password: Any, *, field: str = "currentPassword"
) -> None:
    """The acting person re-enters their password (minting a key, account changes).

    Rate limited per account. ``field`` is the body key that carried it, named
    in ``details.fields`` so a form marks the right input.
    """
    decision = await ctx.limiter.hit(f"cms:reauth:{user_id}", REAUTH_LIMIT, LOGIN_WINDOW_SECONDS)
    if not decision.allowed:
        raise RateLimited("too many password attempts; try again later", decision.headers())
    async with ctx.db.connection() as conn:
        password_hash = await people_store.password_hash(conn, user_id)
    if not isinstance(password, str) or not await verify_password(password_hash, password):
        missing = not isinstance(password, str) or not password
        raise Forbidden(
            "re-enter your current password to do this",
            "PASSWORD_INCORRECT",
            {"fields": [{"key": field, "message": "is required" if missing else "is wrong"}]},
        )
