"""Who signs in to the protocol servers: SMTP submission, JMAP, and what comes next."""

from __future__ import annotations

from dataclasses import dataclass

from common.db import Conn, fetch_all, fetch_one
from common.passwords import verify_password


@dataclass(frozen=True)
class Principal:
    """An address that proved its password: who submits, or who opens a JMAP session."""

    address_id: str
    account_id: str
    email: str
    display_name: str = ""


async def authenticate(conn: Conn, email: str, password: str) -> Principal | None:
    """The address ``email`` if ``password`` is its password; None otherwise.

    A login names its mailbox exactly: no +tag, no fallback domain. An unknown
    address costs the same hash work as a wrong password (no user probing).
    """
    local, _, domain = email.strip().lower().rpartition("@")
    row = (
        await fetch_one(
            conn,
            """
            SELECT a.id::text, d.account_id::text, a.password_hash, a.display_name
              FROM mail.addresses a JOIN mail.domains d ON d.id = a.domain_id
             WHERE d.name = %s AND a.local_part = %s
            """,
            (domain, local),
        )
        if local
        else None
    )
    ok = await verify_password(row["password_hash"] if row else None, password)
    if row is None or not ok:
        return None
    return Principal(
        address_id=row["id"],
        account_id=row["account_id"],
        email=f"{local}@{domain}",
        display_name=row["display_name"] or "",
    )


async def account_addresses(conn: Conn, account_number: int) -> list[Principal]:
    """Every address the panel account numbered ``account_number`` owns (OAuth ``sub``),
    oldest first. JMAP gives each as its own account to a Bearer token of that
    panel account."""
    rows = await fetch_all(
        conn,
        """
        SELECT a.id::text AS address_id, d.account_id::text AS account_id,
               a.local_part || '@' || d.name AS email, a.display_name
          FROM mail.addresses a
          JOIN mail.domains d ON d.id = a.domain_id
          JOIN mail.accounts acc ON acc.id = d.account_id
         WHERE acc.number = %s ORDER BY a.created_at, d.name, a.local_part
        """,
        (account_number,),
    )
    return [Principal(**row) for row in rows]
