"""The bytes an account stores over all its addresses: the plan's storage_bytes usage.

The statement sums ``mta.quota_usage`` over mail's addresses of the account.
It stays in the directory rather than mta/store (which the directory may not
import: it imports only common/); tests/test_boundaries.py allows it by name.
"""

from __future__ import annotations

from common.db import Conn, Prepared

_ACCOUNT_USED = Prepared(
    """
    SELECT coalesce(sum(q.used_bytes), 0) AS used
      FROM mail.domains d
      JOIN mail.addresses a ON a.domain_id = d.id
      JOIN mta.quota_usage q ON q.address_id = a.id
     WHERE d.account_id = %(account)s
    """
)


async def account_used_bytes(conn: Conn, account_id: str) -> int:
    """Bytes stored over all of an account's addresses: the plan's storage_bytes usage."""
    row = await _ACCOUNT_USED.fetch_one(conn, {"account": account_id})
    return int(row["used"]) if row else 0
