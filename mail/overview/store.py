"""The Overview's reads of mail's own tables (mta's come through mta/mailstore.py)."""

from __future__ import annotations

from dataclasses import dataclass

from common.db import Conn, fetch_all
from common.records import Record


@dataclass(frozen=True)
class Quota(Record):
    id: str
    quota_bytes: int


async def address_quotas(conn: Conn, account_id: str) -> list[Quota]:
    """Every address of the account with its quota (0: unlimited)."""
    rows = await fetch_all(
        conn,
        "SELECT a.id::text, a.quota_bytes FROM mail.addresses a"
        " JOIN mail.domains d ON d.id = a.domain_id WHERE d.account_id = %s",
        (account_id,),
    )
    return [Quota.from_row(r) for r in rows]
