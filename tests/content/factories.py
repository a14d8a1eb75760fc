"""Small data factories for the CMS tests: rows inserted directly, no hashing per test."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from common.clock import Clock
from common.crypto import sha256_hex
from common.db import Database, Json, execute, fetch_one
from common.ids import prefixed_token, random_id, short_id
from common.passwords import hash_password_sync

PASSWORD = "correct horse battery staple"
# Hashed once per test run: argon2 costs ~50 ms a call.
PASSWORD_HASH = hash_password_sync(PASSWORD)


@dataclass
class Person:
    id: str
    email: str
    role: str
    token: str
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def make_user(
    db: Database, clock: Clock, role: str = "editor", *, email: str | None = None, name: str = ""
) -> Person:
    user_id = short_id()
    email = email or f"{role}-{user_id.lower()}@example.com"
    now = clock.now()
    async with db.connection() as conn:
        await execute(
            conn,
            "INSERT INTO content.users (id, email, name, role, password_hash, created_at,"
            " updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (user_id, email, name or role.title(), role, PASSWORD_HASH, now, now),
        )
    token = await make_session(db, clock, user_id)
    return Person(id=user_id, email=email, role=role, token=token)


async def make_session(db: Database, clock: Clock, user_id: str) -> str:
    token = random_id()
    now = clock.now()
    await db.execute(
        "INSERT INTO content.sessions (token_hash, user_id, created_at, expires_at)"
        " VALUES (%s, %s, %s, %s)",
        (sha256_hex(token), user_id, now, now + timedelta(days=30)),
    )
    return token


async def make_agent_key(
    db: Database,
    clock: Clock,
    user_id: str,
    grants: list[str],
    *,
    days: int = 90,
    revoked: bool = False,
) -> str:
    token = prefixed_token("svcagt_")
    now = clock.now()
    await db.execute(
        "INSERT INTO content.agent_keys (id, user_id, name, token_hash, hint, grants, created_at,"
        " expires_at, revoked_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            short_id(),
            user_id,
            "test key",
            sha256_hex(token),
            token[:11],
            grants,
            now,
            now + timedelta(days=days),
            now if revoked else None,
        ),
    )
    return token


async def make_delivery_key(
    db: Database, clock: Clock, scopes: list[str], *, revoked: bool = False
) -> str:
    token = prefixed_token("svc_")
    now = clock.now()
    await db.execute(
        "INSERT INTO content.delivery_keys (id, name, token_hash, hint, type_scopes, created_at,"
        " updated_at, revoked_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (
            short_id(),
            "site",
            sha256_hex(token),
            token[:8],
            scopes,
            now,
            now,
            now if revoked else None,
        ),
    )
    return token


async def make_type(
    db: Database,
    clock: Clock,
    name: str,
    fields: list[dict[str, Any]],
    *,
    single: bool = False,
    preview_url: str | None = None,
) -> dict[str, Any]:
    now = clock.now()
    async with db.connection() as conn:
        row = await fetch_one(
            conn,
            "INSERT INTO content.content_types (id, name, label, fields, single, preview_url,"
            " created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING *",
            (short_id(), name, name.title(), Json(fields), single, preview_url, now, now),
        )
    assert row is not None
    return row


async def make_media(
    db: Database, clock: Clock, media_id: str | None = None, media_type: str = "image/png"
) -> str:
    """A media row (no bytes stored): enough for media and gallery fields to accept its id."""
    media_id = media_id or short_id()
    now = clock.now()
    await db.execute(
        "INSERT INTO content.media (id, filename, type, size, sha256, url, created_at,"
        " updated_at) VALUES (%s, %s, %s, 1, %s, %s, %s, %s)",
        (media_id, f"{media_id}.png", media_type, "0" * 64, f"http://x/{media_id}", now, now),
    )
    return media_id
