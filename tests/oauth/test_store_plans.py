"""The hot statements reach their row by primary key, whatever plan PostgreSQL caches.

The token endpoint runs its statements as server-side prepared statements, so
PostgreSQL settles on one generic plan per connection, built from whatever
statistics the table had then (often: nearly none). A statement whose other
conditions are indexable can settle on the wrong index and then filter every
row it reaches on each call: that is a rotation costing more with every token
issued, which no functional test notices.
"""

from __future__ import annotations

from datetime import timedelta

from common.clock import ManualClock
from common.crypto import sha256_hex
from common.db import Database, execute
from oauth import Tables
from oauth.store import Store
from tests.plans import generic_plan


async def test_refresh_rotation_uses_the_primary_key_under_a_generic_plan(
    db: Database, clock: ManualClock
):
    store = Store(Tables())
    now = clock.now()
    async with db.connection() as conn:
        # The plan every pooled connection ends up with after five executions.
        await execute(conn, "SET plan_cache_mode = force_generic_plan")
        await store.insert_client(
            conn,
            client_id="plan-client",
            secret_hash=sha256_hex("secret"),
            name="plans",
            description=None,
            icon_url=None,
            redirect_uris=["https://app.example/cb"],
            allowed_scopes=["openid"],
            is_official=False,
            created_by=None,
            now=now,
        )
        token = sha256_hex("first")
        await store.insert_refresh_token(
            conn,
            token_hash=token,
            client_id="plan-client",
            user_id=1,
            scope="openid",
            chain_id="chain",
            access_jti="jti-0",
            access_expires_at=now + timedelta(minutes=15),
            now=now,
            expires_at=now + timedelta(days=30),
        )
        for n in range(1, 4):
            successor = sha256_hex(f"token-{n}")
            _, row = await store.authenticate_and_rotate(
                conn,
                client_id="plan-client",
                address="192.0.2.1",
                secret_hash=sha256_hex("secret"),
                token_hash=token,
                requested_scopes=None,
                new_hash=successor,
                access_jti=f"jti-{n}",
                access_expires_at=now + timedelta(minutes=15),
                now=now,
                expires_at=now + timedelta(days=30),
                sealed=None,
            )
            assert row is not None and row["token_hash"] == successor
            token = successor
        plan = await generic_plan(conn, "revoked_reason = 'rotated'")
    assert "oauth_refresh_tokens_pkey" in plan, plan
    assert "oauth_refresh_tokens_client_idx" not in plan, plan
