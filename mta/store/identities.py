"""Identities (JMAP Identity, RFC 8621 6): who an address sends as. Writes ``mta.identities``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val
from common.records import Record
from mta.store import changes

# The columns create() and update() may set (values already checked; addresses as Json).
SETTABLE = ("name", "email", "reply_to", "bcc", "text_signature", "html_signature")
_COLUMNS = "id::text AS id, name, email, reply_to, bcc, text_signature, html_signature"


@dataclass(frozen=True)
class Identity(Record):
    id: str
    name: str
    email: str
    reply_to: list[dict[str, Any]] | None
    bcc: list[dict[str, Any]] | None
    text_signature: str
    html_signature: str


def _checked(values: dict[str, Any]) -> dict[str, Any]:
    unknown = set(values) - set(SETTABLE)
    if unknown:
        raise ValueError(f"not an identity column: {sorted(unknown)}")
    return values


async def ensure(conn: Conn, address_id: str, name: str, email: str, now: datetime) -> None:
    """The address's first identity (its address and display name), made on first read."""
    row = await fetch_one(
        conn,
        """
        INSERT INTO mta.identities (address_id, name, email, created_at)
        SELECT %s, %s, %s, %s
         WHERE NOT EXISTS (SELECT 1 FROM mta.identities WHERE address_id = %s)
        RETURNING id::text AS id
        """,
        (address_id, name, email, now, address_id),
    )
    if row is not None:
        await changes.record(conn, address_id, "Identity", [row["id"]], "created", now)


async def list_for(conn: Conn, address_id: str) -> list[Identity]:
    rows = await fetch_all(
        conn,
        f"SELECT {_COLUMNS} FROM mta.identities WHERE address_id = %s ORDER BY created_at, id",
        (address_id,),
    )
    return [Identity.from_row(row) for row in rows]


async def email_of(conn: Conn, address_id: str, identity_id: str) -> str | None:
    """The address an identity of ``address_id`` sends as (None: no such identity)."""
    return await fetch_val(
        conn,
        "SELECT email FROM mta.identities WHERE id = %s AND address_id = %s",
        (identity_id, address_id),
    )


async def create(conn: Conn, address_id: str, values: dict[str, Any], now: datetime) -> str:
    """A new identity with ``values`` and its change; its id."""
    names = list(_checked(values))
    row = await fetch_one(
        conn,
        f"""
        INSERT INTO mta.identities (address_id, created_at, {", ".join(names)})
        VALUES (%s, %s, {", ".join(["%s"] * len(names))})
        RETURNING id::text AS id
        """,
        (address_id, now, *values.values()),
    )
    assert row is not None
    await changes.record(conn, address_id, "Identity", [row["id"]], "created", now)
    return str(row["id"])


async def update(
    conn: Conn, address_id: str, identity_id: str, values: dict[str, Any], now: datetime
) -> bool:
    """Set ``values`` on the address's identity; False when it has no such identity.
    An empty patch changes nothing and logs nothing."""
    if not values:
        found = await fetch_all(
            conn,
            "SELECT 1 FROM mta.identities WHERE id::text = %s AND address_id = %s",
            (identity_id, address_id),
        )
        return bool(found)
    assignments = ", ".join(f"{c} = %s" for c in _checked(values))
    count = await execute(
        conn,
        f"UPDATE mta.identities SET {assignments} WHERE id::text = %s AND address_id = %s",
        (*values.values(), identity_id, address_id),
    )
    if count:
        await changes.record(conn, address_id, "Identity", [identity_id], "updated", now)
    return bool(count)


async def destroy(conn: Conn, address_id: str, identity_id: str, now: datetime) -> bool:
    count = await execute(
        conn,
        "DELETE FROM mta.identities WHERE id::text = %s AND address_id = %s",
        (identity_id, address_id),
    )
    if count:
        await changes.record(conn, address_id, "Identity", [identity_id], "destroyed", now)
    return bool(count)
