"""SQL for ``mail.accounts`` and ``mail.account_tokens``.

Every function takes the connection first, so one transaction can span them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_one, fetch_val
from common.records import Record

_FIELDS = (
    "id",
    "email",
    "name",
    "password_hash",
    "email_verified_at",
    "is_owner",
    "totp_secret",
    "totp_pending_secret",
    "totp_enabled_at",
    "totp_last_step",
    "notifications",
    "referral_code",
    "referred_by",
    "created_at",
    "updated_at",
    "number",
)
_TEXT_CAST = frozenset({"id", "referred_by"})  # uuids travel as str


def select_columns(alias: str = "", prefix: str = "") -> str:
    """The account's columns for a SELECT list, optionally aliased for a join."""
    table = f"{alias}." if alias else ""
    return ", ".join(
        f"{table}{f}{'::text' if f in _TEXT_CAST else ''} AS {prefix}{f}" for f in _FIELDS
    )


def from_prefixed(row: Mapping[str, Any], prefix: str) -> Account:
    """The Account inside a joined row selected with ``select_columns(prefix=...)``."""
    return Account.from_row({f: row[prefix + f] for f in _FIELDS})


_COLUMNS = select_columns()


@dataclass(frozen=True)
class Account(Record):
    id: str
    email: str
    name: str
    password_hash: str
    email_verified_at: datetime | None
    is_owner: bool
    totp_secret: str | None
    totp_pending_secret: str | None
    totp_enabled_at: datetime | None
    totp_last_step: int
    notifications: dict[str, Any]
    referral_code: str
    referred_by: str | None
    created_at: datetime
    updated_at: datetime
    # Integer id for integrations that need one (the OAuth server's user ids).
    number: int

    @property
    def totp_enabled(self) -> bool:
        return self.totp_secret is not None


async def get(conn: Conn, account_id: str) -> Account | None:
    return Account.from_optional(
        await fetch_one(conn, f"SELECT {_COLUMNS} FROM mail.accounts WHERE id = %s", (account_id,))
    )


async def get_by_number(conn: Conn, number: int) -> Account | None:
    return Account.from_optional(
        await fetch_one(conn, f"SELECT {_COLUMNS} FROM mail.accounts WHERE number = %s", (number,))
    )


async def get_by_email(conn: Conn, email: str) -> Account | None:
    return Account.from_optional(
        await fetch_one(conn, f"SELECT {_COLUMNS} FROM mail.accounts WHERE email = %s", (email,))
    )


async def get_by_referral_code(conn: Conn, code: str) -> Account | None:
    return Account.from_optional(
        await fetch_one(
            conn, f"SELECT {_COLUMNS} FROM mail.accounts WHERE referral_code = %s", (code,)
        )
    )


async def lock_signups(conn: Conn) -> None:
    """Serialise sign-ups (inside a transaction) so two cannot both be 'the first'."""
    await execute(conn, "SELECT pg_advisory_xact_lock(hashtext('mail.signup'))")


async def any_account(conn: Conn) -> bool:
    return bool(await fetch_val(conn, "SELECT EXISTS (SELECT 1 FROM mail.accounts)"))


async def insert(
    conn: Conn,
    *,
    email: str,
    name: str,
    password_hash: str,
    is_owner: bool,
    referral_code: str,
    referred_by: str | None,
    notifications: dict[str, bool],
    now: datetime,
    email_verified_at: datetime | None = None,
) -> Account:
    row = await fetch_one(
        conn,
        "INSERT INTO mail.accounts (email, name, password_hash, is_owner, referral_code,"
        " referred_by, notifications, email_verified_at, created_at, updated_at)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        f" RETURNING {_COLUMNS}",
        (
            email,
            name,
            password_hash,
            is_owner,
            referral_code,
            referred_by,
            Json(notifications),
            email_verified_at,
            now,
            now,
        ),
    )
    assert row is not None
    return Account.from_row(row)


# Columns an update may set; values are always parameters.
_UPDATABLE = frozenset(
    {
        "email",
        "name",
        "password_hash",
        "email_verified_at",
        "totp_secret",
        "totp_pending_secret",
        "totp_enabled_at",
        "totp_last_step",
        "notifications",
    }
)


async def update(conn: Conn, account_id: str, now: datetime, **values: Any) -> Account | None:
    unknown = set(values) - _UPDATABLE
    if unknown:
        raise ValueError(f"not updatable: {sorted(unknown)}")
    sets = ", ".join(f"{column} = %s" for column in values)
    params = [Json(v) if isinstance(v, dict) else v for v in values.values()]
    return Account.from_optional(
        await fetch_one(
            conn,
            f"UPDATE mail.accounts SET {sets}, updated_at = %s WHERE id = %s RETURNING {_COLUMNS}",
            (*params, now, account_id),
        )
    )


async def advance_totp_step(conn: Conn, account_id: str, step: int) -> bool:
    """Record ``step`` as used; False when it (or a later one) was already used."""
    n = await execute(
        conn,
        "UPDATE mail.accounts SET totp_last_step = %s WHERE id = %s AND totp_last_step < %s",
        (step, account_id, step),
    )
    return n == 1


async def delete(conn: Conn, account_id: str) -> bool:
    return await execute(conn, "DELETE FROM mail.accounts WHERE id = %s", (account_id,)) == 1


async def count_others(conn: Conn, account_id: str) -> int:
    return int(
        await fetch_val(conn, "SELECT count(*) FROM mail.accounts WHERE id <> %s", (account_id,))
    )


async def referral_counts(conn: Conn, account_id: str) -> tuple[int, int]:
    row = await fetch_one(
        conn,
        "SELECT count(*) AS signups, count(email_verified_at) AS verified"
        " FROM mail.accounts WHERE referred_by = %s",
        (account_id,),
    )
    assert row is not None
    return int(row["signups"]), int(row["verified"])


# --- one-time tokens ---------------------------------------------------------


async def insert_token(
    conn: Conn,
    *,
    account_id: str,
    kind: str,
    token_hash: str,
    data: dict[str, Any],
    now: datetime,
    expires_at: datetime,
) -> None:
    await execute(
        conn,
        "INSERT INTO mail.account_tokens (account_id, kind, token_hash, data, created_at,"
        " expires_at) VALUES (%s, %s, %s, %s, %s, %s)",
        (account_id, kind, token_hash, Json(data), now, expires_at),
    )


@dataclass(frozen=True)
class RedeemedToken(Record):
    account_id: str
    # What the issuer attached (the new address of an email change): free-form JSON.
    data: dict[str, Any]


async def redeem_token(
    conn: Conn, *, kind: str, token_hash: str, now: datetime
) -> RedeemedToken | None:
    """Mark a live token used and return it; None when unknown, used or expired.

    One UPDATE, so two concurrent redemptions cannot both succeed.
    """
    row = await fetch_one(
        conn,
        "UPDATE mail.account_tokens SET used_at = %s"
        " WHERE token_hash = %s AND kind = %s AND used_at IS NULL AND expires_at > %s"
        " RETURNING account_id::text, data",
        (now, token_hash, kind, now),
    )
    return RedeemedToken.from_optional(row)


async def void_tokens(conn: Conn, account_id: str, kind: str, now: datetime) -> None:
    """Retire every outstanding token of a kind (a newer one or a redemption supersedes them)."""
    await execute(
        conn,
        "UPDATE mail.account_tokens SET used_at = %s"
        " WHERE account_id = %s AND kind = %s AND used_at IS NULL",
        (now, account_id, kind),
    )


async def sweep_tokens(conn: Conn, now: datetime) -> int:
    return await execute(
        conn,
        "DELETE FROM mail.account_tokens WHERE expires_at < %s OR used_at IS NOT NULL",
        (now,),
    )
