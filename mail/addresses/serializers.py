"""Response shape of addresses, built only here: never the password hash."""

from __future__ import annotations

from typing import Any

from mail.addresses.store import Address
from mail.domains.names import unicode_domain


def address(row: Address) -> dict[str, Any]:
    return {
        "object": "address",
        "id": row.id,
        "domain_id": row.domain_id,
        "email": row.email,
        "unicode_email": f"{row.local_part}@{unicode_domain(row.domain_name)}",
        "local_part": row.local_part,
        "display_name": row.display_name,
        "quota_bytes": row.quota_bytes,
        "recovery_email": row.recovery_email,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }
