"""Mail test data: accounts inserted directly, with a password hashed once per run."""

from __future__ import annotations

import email
import itertools
from datetime import timedelta
from email.message import EmailMessage
from email.policy import default as default_policy
from typing import Any

from argon2 import PasswordHasher

from common.crypto import sha256_hex
from common.ids import random_id
from common.runtime import Runtime
from mail.accounts import store as accounts_store
from mail.accounts.store import Account
from mail.auth import store as sessions_store
from mail.auth.sessions import COOKIE_NAME
from mta import mailstore

PASSWORD = "correct horse battery staple"
# A real argon2id hash, computed once, with small cost parameters: verification
# reads its cost from the hash itself, so every login in the suite stays cheap
# while running the same code as production.
PASSWORD_HASH = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1).hash(PASSWORD)

_numbers = itertools.count(1)


async def make_account(
    runtime: Runtime,
    *,
    email_address: str | None = None,
    name: str = "Test User",
    is_owner: bool = False,
    verified: bool = True,
    referred_by: str | None = None,
) -> Account:
    n = next(_numbers)
    now = runtime.clock.now()
    async with runtime.db.connection() as conn:
        return await accounts_store.insert(
            conn,
            email=email_address or f"user{n}@example.com",
            name=name,
            password_hash=PASSWORD_HASH,
            is_owner=is_owner,
            referral_code=f"ref{n}{random_id(4)}",
            referred_by=referred_by,
            notifications={},
            now=now,
            email_verified_at=now if verified else None,
        )


async def make_session(
    runtime: Runtime, account: Account, *, ip: str = "127.0.0.1", user_agent: str = "pytest"
) -> str:
    """A signed-in session; returns the svc_session cookie value."""
    token = random_id()
    now = runtime.clock.now()
    async with runtime.db.connection() as conn:
        await sessions_store.insert(
            conn,
            account_id=account.id,
            token_hash=sha256_hex(token),
            ip=ip,
            user_agent=user_agent,
            now=now,
            expires_at=now + timedelta(days=14),
        )
    return token


def cookie(token: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE_NAME}={token}"}


async def signed_in(runtime: Runtime, **kwargs: Any) -> tuple[Account, dict[str, str]]:
    """An account and the headers of one of its sessions."""
    account = await make_account(runtime, **kwargs)
    return account, cookie(await make_session(runtime, account))


async def outbox(runtime: Runtime) -> list[tuple[dict[str, Any], EmailMessage]]:
    """The panel's queued mail (the mta's outbound queue, source 'system'), oldest
    first, as the worker reads it (opened), parsed: ({kind, rcpt_to, subject, message}, msg)."""
    sealer = mailstore.outbound_sealer(runtime.settings.secret)
    rows = await runtime.db.fetch_all(
        "SELECT m.id::text, m.event_data, r.rcpt, m.raw_sealed FROM mta.outbound_messages m"
        " JOIN mta.outbound_recipients r ON r.message_id = m.id"
        " WHERE m.source = 'system' AND m.raw_sealed IS NOT NULL"
        " ORDER BY m.created_at, r.position"
    )
    parsed = []
    for row in rows:
        raw = sealer.open_bytes(row["raw_sealed"])
        data = row["event_data"] or {}
        found = {
            "id": row["id"],
            "kind": data.get("kind"),
            "rcpt_to": row["rcpt"],
            "subject": data.get("subject"),
            "message": raw,
        }
        msg = email.message_from_bytes(raw, policy=default_policy)
        parsed.append((found, msg))  # type: ignore[arg-type]
    return parsed


def token_from(msg: EmailMessage) -> str:
    body = msg.get_content()
    return body.split("?token=", 1)[1].split()[0]
