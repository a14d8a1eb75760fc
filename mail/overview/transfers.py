"""The Overview's list of running transfers (mail/transfers/ owns them)."""

from __future__ import annotations

from typing import Any

from common.db import Conn
from mail.transfers import serializers, store


async def running(conn: Conn, account_id: str) -> list[dict[str, Any]]:
    """Queued and running transfers, newest first, shaped as GET /api/transfers/:id."""
    return [serializers.transfer(row) for row in await store.active(conn, account_id)]
