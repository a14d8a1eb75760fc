"""SQL for ``mail.dkim_keys``. The sealed private key is selected only by the MTA."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record

# Never the private key: what the panel shows and the record set needs.
PUBLIC_COLUMNS = (
    "id::text, domain_id::text, selector, algorithm, public_key_b64, active, created_at"
)


@dataclass(frozen=True)
class DkimKey(Record):
    """A key as the panel and the record set see it: never the private key."""

    id: str
    domain_id: str
    selector: str
    algorithm: str
    public_key_b64: str
    active: bool
    created_at: datetime


async def insert(
    conn: Conn,
    *,
    domain_id: str,
    selector: str,
    algorithm: str,
    private_key_sealed: str,
    public_key_b64: str,
    active: bool,
    now: datetime,
) -> str:
    return str(
        await fetch_val(
            conn,
            "INSERT INTO mail.dkim_keys (domain_id, selector, algorithm, private_key_sealed,"
            " public_key_b64, active, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s)"
            " RETURNING id",
            (domain_id, selector, algorithm, private_key_sealed, public_key_b64, active, now),
        )
    )


async def list_for_domain(conn: Conn, domain_id: str) -> list[DkimKey]:
    rows = await fetch_all(
        conn,
        f"SELECT {PUBLIC_COLUMNS} FROM mail.dkim_keys WHERE domain_id = %s"
        " ORDER BY created_at, selector",
        (domain_id,),
    )
    return [DkimKey.from_row(row) for row in rows]


async def list_for_domains(conn: Conn, domain_ids: list[str]) -> dict[str, list[DkimKey]]:
    """Keys of several domains in one query (the periodic check), by domain id."""
    rows = await fetch_all(
        conn,
        f"SELECT {PUBLIC_COLUMNS} FROM mail.dkim_keys WHERE domain_id = ANY(%s::uuid[])"
        " ORDER BY created_at, selector",
        (domain_ids,),
    )
    grouped: dict[str, list[DkimKey]] = {d: [] for d in domain_ids}
    for row in rows:
        key = DkimKey.from_row(row)
        grouped[key.domain_id].append(key)
    return grouped


async def get(
    conn: Conn, domain_id: str, key_id: str, *, for_update: bool = False
) -> DkimKey | None:
    lock = " FOR UPDATE" if for_update else ""
    row = await fetch_one(
        conn,
        f"SELECT {PUBLIC_COLUMNS} FROM mail.dkim_keys WHERE domain_id = %s AND id = %s{lock}",
        (domain_id, key_id),
    )
    return DkimKey.from_optional(row)


async def delete(conn: Conn, domain_id: str, key_id: str) -> int:
    return await execute(
        conn, "DELETE FROM mail.dkim_keys WHERE domain_id = %s AND id = %s", (domain_id, key_id)
    )


async def activate(conn: Conn, domain_id: str, key_id: str) -> None:
    """Make one key the signing key (inside a transaction: off first, then on)."""
    await execute(
        conn,
        "UPDATE mail.dkim_keys SET active = false WHERE domain_id = %s AND active AND id <> %s",
        (domain_id, key_id),
    )
    await execute(
        conn,
        "UPDATE mail.dkim_keys SET active = true WHERE domain_id = %s AND id = %s",
        (domain_id, key_id),
    )
