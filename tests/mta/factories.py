"""Rows the mta reads, inserted directly (accounts, domains, addresses are mail/'s)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from common.db import Database

NOW = datetime(2026, 1, 1, tzinfo=UTC)


async def account(db: Database, email: str | None = None) -> str:
    email = email or f"owner-{secrets.token_hex(4)}@panel.test"
    return str(
        await db.fetch_val(
            """
            INSERT INTO mail.accounts (email, password_hash, referral_code, created_at, updated_at)
            VALUES (%s, 'not-a-hash', %s, %s, %s) RETURNING id
            """,
            (email, secrets.token_hex(6), NOW, NOW),
        )
    )


async def domain(
    db: Database, account_id: str, name: str, *, fallback_domain_id: str | None = None
) -> str:
    return str(
        await db.fetch_val(
            """
            INSERT INTO mail.domains (account_id, name, fallback_domain_id, created_at, updated_at)
            VALUES (%s, %s, %s, %s, %s) RETURNING id
            """,
            (account_id, name, fallback_domain_id, NOW, NOW),
        )
    )


async def address(db: Database, domain_id: str, local_part: str, *, quota_bytes: int = 0) -> str:
    return str(
        await db.fetch_val(
            """
            INSERT INTO mail.addresses
                (domain_id, local_part, password_hash, quota_bytes, created_at, updated_at)
            VALUES (%s, %s, 'not-a-hash', %s, %s, %s) RETURNING id
            """,
            (domain_id, local_part, quota_bytes, NOW, NOW),
        )
    )


async def mailbox_owner(db: Database, email: str, *, quota_bytes: int = 0) -> dict[str, Any]:
    """An account with a domain and one address on it: {account_id, domain_id, address_id}."""
    local, _, name = email.partition("@")
    account_id = await account(db)
    domain_id = await domain(db, account_id, name)
    address_id = await address(db, domain_id, local, quota_bytes=quota_bytes)
    return {"account_id": account_id, "domain_id": domain_id, "address_id": address_id}
