"""Expiry sweeps (spec: sweepExpired), each usable alone; the gateway runs them hourly.

sweep_expired runs them concurrently, each on its own pooled connection.
Used codes stay until they expire, so a replayed code is recognised (and its
grant burned) for as long as it could have been valid. Revoked refresh tokens
stay until they expire too: a token presented again after rotation must
still find its record to burn the chain.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

from oauth.constants import CLIENT_AUTH_FAILURE_WINDOW_SECONDS
from oauth.server import AuthorizationServer

SWEEP_JOB_KIND = "oauth.sweep_expired"
SWEEP_EVERY_SECONDS = 3600


@dataclass(frozen=True)
class SweepResult:
    authorization_codes: int
    refresh_tokens: int
    device_codes: int
    client_auth_failures: int = 0


async def sweep_authorization_codes(server: AuthorizationServer) -> int:
    async with server.db.connection() as conn:
        return await server.store.sweep_authorization_codes(conn, server.now())


async def sweep_refresh_tokens(server: AuthorizationServer) -> int:
    """Expired refresh tokens, expired jti denylist rows, sealed pairs past the grace window."""
    now = server.now()
    sealed_before = now - timedelta(seconds=server.config.refresh_grace_seconds)
    async with server.db.connection() as conn:
        return await server.store.sweep_refresh_tokens(conn, now, sealed_before)


async def sweep_device_codes(server: AuthorizationServer) -> int:
    async with server.db.connection() as conn:
        return await server.store.sweep_device_codes(conn, server.now())


async def sweep_client_auth_failures(server: AuthorizationServer) -> int:
    """Per-address failure counts whose window has passed and whose lock has run out."""
    now = server.now()
    since = now - timedelta(seconds=CLIENT_AUTH_FAILURE_WINDOW_SECONDS)
    async with server.db.connection() as conn:
        return await server.store.sweep_client_auth_failures(conn, now, since)


async def sweep_expired(server: AuthorizationServer) -> SweepResult:
    codes, refresh, devices, failures = await asyncio.gather(
        sweep_authorization_codes(server),
        sweep_refresh_tokens(server),
        sweep_device_codes(server),
        sweep_client_auth_failures(server),
    )
    return SweepResult(codes, refresh, devices, failures)
