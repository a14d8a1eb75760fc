"""SQL for the provider, its OAuth consents, the usage meter and the assistant settings
(content/migrations/0070_assistant.sql), connection first."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from common.db import Conn, execute, fetch_all, fetch_one, fetch_val

Row = dict[str, Any]

# --- the provider ---------------------------------------------------------------


async def provider(conn: Conn) -> Row | None:
    return await fetch_one(conn, "SELECT * FROM content.assistant_provider WHERE id = 1")


async def put_provider(conn: Conn, values: Row, user_id: str, now: datetime) -> None:
    """Connect (or replace) the one provider; a new connection has no test yet."""
    await execute(
        conn,
        "INSERT INTO content.assistant_provider (id, kind, model, base_url, auth,"
        " secret_sealed, secret_hint, expires_at, connected_by, created_at, updated_at)"
        " VALUES (1, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, model = EXCLUDED.model,"
        " base_url = EXCLUDED.base_url, auth = EXCLUDED.auth,"
        " secret_sealed = EXCLUDED.secret_sealed, secret_hint = EXCLUDED.secret_hint,"
        " expires_at = EXCLUDED.expires_at, connected_by = EXCLUDED.connected_by,"
        " tested_at = NULL, test_ok = NULL, test_problem = NULL,"
        " updated_at = EXCLUDED.updated_at",
        (
            values["kind"],
            values["model"],
            values["base_url"],
            values["auth"],
            values["secret_sealed"],
            values["secret_hint"],
            values.get("expires_at"),
            user_id,
            now,
            now,
        ),
    )


async def set_tokens(conn: Conn, sealed: str, expires_at: datetime | None, now: datetime) -> None:
    await execute(
        conn,
        "UPDATE content.assistant_provider SET secret_sealed = %s, expires_at = %s,"
        " updated_at = %s WHERE id = 1",
        (sealed, expires_at, now),
    )


async def set_test(conn: Conn, ok: bool, problem: str | None, now: datetime) -> None:
    await execute(
        conn,
        "UPDATE content.assistant_provider SET tested_at = %s, test_ok = %s, test_problem = %s"
        " WHERE id = 1",
        (now, ok, problem),
    )


async def delete_provider(conn: Conn) -> bool:
    return await execute(conn, "DELETE FROM content.assistant_provider WHERE id = 1") > 0


# --- OAuth consents --------------------------------------------------------------


async def add_state(conn: Conn, values: Row) -> None:
    await execute(
        conn,
        "INSERT INTO content.assistant_oauth_states (state_hash, user_id, kind, model, base_url,"
        " verifier_sealed, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (
            values["state_hash"],
            values["user_id"],
            values["kind"],
            values["model"],
            values["base_url"],
            values["verifier_sealed"],
            values["expires_at"],
        ),
    )


async def take_state(conn: Conn, state_hash: str, now: datetime) -> Row | None:
    """The live consent ``state_hash`` names, used up (single use); expired ones swept."""
    await execute(conn, "DELETE FROM content.assistant_oauth_states WHERE expires_at <= %s", (now,))
    return await fetch_one(
        conn,
        "DELETE FROM content.assistant_oauth_states WHERE state_hash = %s RETURNING *",
        (state_hash,),
    )


# --- the meter -----------------------------------------------------------------


async def add_usage(conn: Conn, month: date, user_id: str, tokens_in: int, tokens_out: int) -> None:
    await execute(
        conn,
        "INSERT INTO content.assistant_usage (month, user_id, tokens_in, tokens_out, requests)"
        " VALUES (%s, %s, %s, %s, 1) ON CONFLICT (month, user_id) DO UPDATE SET"
        " tokens_in = content.assistant_usage.tokens_in + EXCLUDED.tokens_in,"
        " tokens_out = content.assistant_usage.tokens_out + EXCLUDED.tokens_out,"
        " requests = content.assistant_usage.requests + 1",
        (month, user_id, tokens_in, tokens_out),
    )


async def usage(conn: Conn, month: date, user_id: str) -> Row:
    row = await fetch_one(
        conn,
        "SELECT tokens_in, tokens_out, requests FROM content.assistant_usage"
        " WHERE month = %s AND user_id = %s",
        (month, user_id),
    )
    return row or {"tokens_in": 0, "tokens_out": 0, "requests": 0}


async def site_usage(conn: Conn, month: date) -> Row:
    row = await fetch_one(
        conn,
        "SELECT coalesce(sum(tokens_in), 0)::bigint AS tokens_in,"
        " coalesce(sum(tokens_out), 0)::bigint AS tokens_out,"
        " coalesce(sum(requests), 0)::bigint AS requests"
        " FROM content.assistant_usage WHERE month = %s",
        (month,),
    )
    assert row is not None
    return row


async def usage_by_person(conn: Conn, month: date) -> list[Row]:
    return await fetch_all(
        conn,
        "SELECT u.user_id, coalesce(p.name, '') AS name, coalesce(p.email, '') AS email,"
        " u.tokens_in, u.tokens_out, u.requests FROM content.assistant_usage u"
        " LEFT JOIN content.users p ON p.id = u.user_id WHERE u.month = %s"
        " ORDER BY u.tokens_in + u.tokens_out DESC",
        (month,),
    )


# --- settings -------------------------------------------------------------------

DEFAULT_SETTINGS: Row = {
    "person_monthly": None,
    "site_monthly": None,
    "bubble_enabled": False,
    "bubble_origins": [],
    "bubble_types": [],
    "bubble_rate": 10,
}
SETTING_COLUMNS = tuple(DEFAULT_SETTINGS)


async def settings(conn: Conn) -> Row:
    row = await fetch_one(conn, "SELECT * FROM content.assistant_settings WHERE id = 1")
    return row or dict(DEFAULT_SETTINGS)


async def put_settings(conn: Conn, values: Row, now: datetime) -> None:
    columns = ", ".join(SETTING_COLUMNS)
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in SETTING_COLUMNS)
    await execute(
        conn,
        f"INSERT INTO content.assistant_settings (id, {columns}, updated_at)"
        f" VALUES (1, {', '.join(['%s'] * len(SETTING_COLUMNS))}, %s)"
        f" ON CONFLICT (id) DO UPDATE SET {updates}, updated_at = EXCLUDED.updated_at",
        (*(values[c] for c in SETTING_COLUMNS), now),
    )


async def bubble_enabled(conn: Conn) -> bool:
    return bool(
        await fetch_val(conn, "SELECT bubble_enabled FROM content.assistant_settings WHERE id = 1")
    )
