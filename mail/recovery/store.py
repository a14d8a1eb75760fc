"""SQL of mail.recovery_tokens, and the reads of addresses that recovery needs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, execute, fetch_one, fetch_val
from common.records import Record


@dataclass(frozen=True)
class Recoverable(Record):
    """An address that has a recovery address, found by its full email."""

    address_id: str
    email: str
    recovery_email: str


async def domain_offers_recovery(conn: Conn, domain: str) -> bool:
    return bool(
        await fetch_val(
            conn,
            """
            SELECT EXISTS (
                SELECT 1 FROM mail.addresses a JOIN mail.domains d ON d.id = a.domain_id
                 WHERE d.name = %s AND a.recovery_email IS NOT NULL)
            """,
            (domain,),
        )
    )


async def recoverable(conn: Conn, local_part: str, domain: str) -> Recoverable | None:
    row = await fetch_one(
        conn,
        """
        SELECT a.id::text AS address_id, a.local_part || '@' || d.name AS email,
               a.recovery_email
          FROM mail.addresses a JOIN mail.domains d ON d.id = a.domain_id
         WHERE d.name = %s AND a.local_part = %s AND a.recovery_email IS NOT NULL
        """,
        (domain, local_part),
    )
    return Recoverable.from_optional(row)


async def void_tokens(conn: Conn, address_id: str, now: datetime) -> None:
    """Earlier unused links of the address stop working (only the newest does)."""
    await execute(
        conn,
        "UPDATE mail.recovery_tokens SET used_at = %s WHERE address_id = %s AND used_at IS NULL",
        (now, address_id),
    )


async def insert_token(
    conn: Conn, address_id: str, token_hash: str, now: datetime, expires_at: datetime
) -> None:
    await execute(
        conn,
        "INSERT INTO mail.recovery_tokens (address_id, token_hash, created_at, expires_at)"
        " VALUES (%s, %s, %s, %s)",
        (address_id, token_hash, now, expires_at),
    )


async def redeem(conn: Conn, token_hash: str, now: datetime) -> str | None:
    """Use the token once: the address id, or None for unknown, used or expired."""
    value = await fetch_val(
        conn,
        """
        UPDATE mail.recovery_tokens SET used_at = %(now)s
         WHERE token_hash = %(h)s AND used_at IS NULL AND expires_at > %(now)s
        RETURNING address_id::text
        """,
        {"h": token_hash, "now": now},
    )
    return None if value is None else str(value)


async def set_password(conn: Conn, address_id: str, password_hash: str, now: datetime) -> str:
    """The new mailbox password; returns the address's email."""
    value = await fetch_val(
        conn,
        """
        UPDATE mail.addresses a SET password_hash = %s, updated_at = %s
          FROM mail.domains d
         WHERE a.id = %s AND d.id = a.domain_id
        RETURNING a.local_part || '@' || d.name
        """,
        (password_hash, now, address_id),
    )
    return str(value)
