"""SQL for the social tables (content/migrations/0060_social.sql), connection first."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_one, fetch_val

Row = dict[str, Any]

# --- network apps -----------------------------------------------------------


async def apps(conn: Conn) -> dict[str, Row]:
    return {r["network"]: r for r in await fetch_all(conn, "SELECT * FROM content.social_apps")}


async def get_app(conn: Conn, network: str) -> Row | None:
    return await fetch_one(conn, "SELECT * FROM content.social_apps WHERE network = %s", (network,))


async def put_app(conn: Conn, network: str, values: Row, now: datetime) -> None:
    await execute(
        conn,
        "INSERT INTO content.social_apps (network, client_id, secret_sealed, secret_last4,"
        " enabled, endpoints, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (network) DO UPDATE SET client_id = EXCLUDED.client_id,"
        " secret_sealed = EXCLUDED.secret_sealed, secret_last4 = EXCLUDED.secret_last4,"
        " enabled = EXCLUDED.enabled, endpoints = EXCLUDED.endpoints,"
        " updated_at = EXCLUDED.updated_at",
        (
            network,
            values["client_id"],
            values["secret_sealed"],
            values["secret_last4"],
            values["enabled"],
            Json(values["endpoints"]),
            now,
        ),
    )


async def delete_app(conn: Conn, network: str) -> bool:
    return await execute(conn, "DELETE FROM content.social_apps WHERE network = %s", (network,)) > 0


async def instance(conn: Conn, network: str, base: str) -> Row | None:
    return await fetch_one(
        conn,
        "SELECT * FROM content.social_instances WHERE network = %s AND instance = %s",
        (network, base),
    )


async def add_instance(
    conn: Conn, network: str, base: str, client_id: str, sealed: str, now: datetime
) -> None:
    await execute(
        conn,
        "INSERT INTO content.social_instances (network, instance, client_id, secret_sealed,"
        " created_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
        (network, base, client_id, sealed, now),
    )


# --- accounts ------------------------------------------------------------------


async def accounts(conn: Conn) -> list[Row]:
    return await fetch_all(conn, "SELECT * FROM content.social_accounts ORDER BY network, handle")


async def account(conn: Conn, account_id: str, *, lock: bool = False) -> Row | None:
    sql = "SELECT * FROM content.social_accounts WHERE id = %s"
    return await fetch_one(conn, sql + (" FOR UPDATE" if lock else ""), (account_id,))


async def save_account(conn: Conn, row: Row, now: datetime) -> Row:
    """Insert, or reconnect the same remote account (fresh tokens, attention cleared)."""
    found = await fetch_one(
        conn,
        "INSERT INTO content.social_accounts (id, network, remote_id, handle, name, base_url,"
        " options, tokens_sealed, expires_at, connected_by, created_at, updated_at)"
        " VALUES (%(id)s, %(network)s, %(remote_id)s, %(handle)s, %(name)s, %(base_url)s,"
        " %(options)s, %(tokens_sealed)s, %(expires_at)s, %(connected_by)s, %(now)s, %(now)s)"
        " ON CONFLICT (network, remote_id) DO UPDATE SET handle = EXCLUDED.handle,"
        " name = EXCLUDED.name, base_url = EXCLUDED.base_url, options = EXCLUDED.options,"
        " tokens_sealed = EXCLUDED.tokens_sealed, expires_at = EXCLUDED.expires_at,"
        " attention = NULL, attention_at = NULL, updated_at = EXCLUDED.updated_at"
        " RETURNING *",
        {**row, "options": Json(row.get("options") or {}), "now": now},
    )
    assert found is not None
    return found


async def set_tokens(
    conn: Conn, account_id: str, sealed: str, expires_at: datetime | None, now: datetime
) -> None:
    await execute(
        conn,
        "UPDATE content.social_accounts SET tokens_sealed = %s, expires_at = %s,"
        " attention = NULL, attention_at = NULL, updated_at = %s WHERE id = %s",
        (sealed, expires_at, now, account_id),
    )


async def set_attention(conn: Conn, account_id: str, reason: str, now: datetime) -> bool:
    """Mark the connection as needing an admin; True when it did not already."""
    return (
        await execute(
            conn,
            "UPDATE content.social_accounts SET attention = %s,"
            " attention_at = COALESCE(attention_at, %s), updated_at = %s"
            " WHERE id = %s",
            (reason, now, now, account_id),
        )
        > 0
    )


async def delete_account(conn: Conn, account_id: str) -> Row | None:
    return await fetch_one(
        conn, "DELETE FROM content.social_accounts WHERE id = %s RETURNING *", (account_id,)
    )


# --- consents in flight -----------------------------------------------------------


async def add_state(conn: Conn, row: Row) -> None:
    await execute(
        conn,
        "INSERT INTO content.social_oauth_states (state_hash, network, session_id, user_id,"
        " verifier_sealed, instance, return_to, expires_at) VALUES (%(state_hash)s,"
        " %(network)s, %(session_id)s, %(user_id)s, %(verifier_sealed)s, %(instance)s,"
        " %(return_to)s, %(expires_at)s)",
        row,
    )


async def take_state(conn: Conn, state_hash: str, now: datetime) -> Row | None:
    """The consent for ``state``, used up: a second callback with it finds nothing."""
    await execute(conn, "DELETE FROM content.social_oauth_states WHERE expires_at <= %s", (now,))
    return await fetch_one(
        conn,
        "DELETE FROM content.social_oauth_states WHERE state_hash = %s RETURNING *",
        (state_hash,),
    )


async def session_live(conn: Conn, session_id: int, now: datetime) -> bool:
    return bool(
        await fetch_val(
            conn,
            "SELECT 1 FROM content.sessions WHERE id = %s AND revoked_at IS NULL"
            " AND expires_at > %s",
            (session_id, now),
        )
    )


# --- posts and targets --------------------------------------------------------------


async def insert_post(conn: Conn, row: Row, now: datetime) -> None:
    await execute(
        conn,
        "INSERT INTO content.social_posts (id, text, link, media, author_id, created_at,"
        " updated_at) VALUES (%(id)s, %(text)s, %(link)s, %(media)s, %(author_id)s, %(now)s,"
        " %(now)s)",
        {**row, "now": now},
    )


async def post(conn: Conn, post_id: str, *, lock: bool = False) -> Row | None:
    sql = "SELECT * FROM content.social_posts WHERE id = %s AND deleted_at IS NULL"
    return await fetch_one(conn, sql + (" FOR UPDATE" if lock else ""), (post_id,))


async def update_post(conn: Conn, post_id: str, values: Row, now: datetime) -> None:
    sets = ", ".join(f"{k} = %({k})s" for k in values)
    await execute(
        conn,
        f"UPDATE content.social_posts SET {sets}, updated_at = %(now)s WHERE id = %(id)s",
        {**values, "id": post_id, "now": now},
    )


async def list_posts(
    conn: Conn, status: str | None, limit: int, offset: int
) -> tuple[list[Row], int]:
    where = "deleted_at IS NULL" + (" AND status = %(status)s" if status else "")
    params = {"status": status, "limit": limit, "offset": offset}
    total = await fetch_val(
        conn, f"SELECT count(*) FROM content.social_posts WHERE {where}", params
    )
    rows = await fetch_all(
        conn,
        f"SELECT * FROM content.social_posts WHERE {where}"
        " ORDER BY created_at DESC, id LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )
    return rows, int(total)


async def in_window(conn: Conn, start: datetime, end: datetime) -> list[Row]:
    return await fetch_all(
        conn,
        "SELECT * FROM content.social_posts WHERE deleted_at IS NULL AND"
        " ((scheduled_at >= %(s)s AND scheduled_at < %(e)s)"
        "  OR (scheduled_at IS NULL AND sent_at >= %(s)s AND sent_at < %(e)s))"
        " ORDER BY COALESCE(scheduled_at, sent_at), id",
        {"s": start, "e": end},
    )


async def overview(conn: Conn, now: datetime) -> Row:
    counts = await fetch_all(
        conn,
        "SELECT status, count(*) AS n FROM content.social_posts WHERE deleted_at IS NULL"
        " GROUP BY status",
    )
    upcoming = await fetch_one(
        conn,
        "SELECT id, scheduled_at FROM content.social_posts WHERE deleted_at IS NULL"
        " AND status = 'scheduled' AND scheduled_at >= %s ORDER BY scheduled_at LIMIT 1",
        (now,),
    )
    last = await fetch_one(
        conn,
        "SELECT id, sent_at FROM content.social_posts WHERE deleted_at IS NULL"
        " AND sent_at IS NOT NULL ORDER BY sent_at DESC LIMIT 1",
    )
    return {"counts": {r["status"]: r["n"] for r in counts}, "next": upcoming, "last": last}


async def targets(conn: Conn, post_ids: Sequence[str]) -> dict[str, list[Row]]:
    rows = await fetch_all(
        conn,
        "SELECT * FROM content.social_targets WHERE post_id = ANY(%s) ORDER BY network, handle",
        (list(post_ids),),
    )
    out: dict[str, list[Row]] = {pid: [] for pid in post_ids}
    for row in rows:
        out[row["post_id"]].append(row)
    return out


async def target(conn: Conn, target_id: str, *, lock: bool = False) -> Row | None:
    sql = "SELECT * FROM content.social_targets WHERE id = %s"
    return await fetch_one(conn, sql + (" FOR UPDATE" if lock else ""), (target_id,))


async def insert_target(conn: Conn, row: Row, now: datetime) -> None:
    await execute(
        conn,
        "INSERT INTO content.social_targets (id, post_id, account_id, network, handle, text,"
        " link, media, idempotency_key, updated_at) VALUES (%(id)s, %(post_id)s,"
        " %(account_id)s, %(network)s, %(handle)s, %(text)s, %(link)s, %(media)s,"
        " %(idempotency_key)s, %(now)s)",
        {**row, "now": now},
    )


async def update_target(conn: Conn, target_id: str, values: Row, now: datetime) -> None:
    sets = ", ".join(f"{k} = %({k})s" for k in values)
    await execute(
        conn,
        f"UPDATE content.social_targets SET {sets}, updated_at = %(now)s WHERE id = %(id)s",
        {**values, "id": target_id, "now": now},
    )


async def delete_target(conn: Conn, target_id: str) -> None:
    await execute(conn, "DELETE FROM content.social_targets WHERE id = %s", (target_id,))


async def unsent_targets_of_account(conn: Conn, account_id: str) -> list[Row]:
    return await fetch_all(
        conn,
        "SELECT * FROM content.social_targets WHERE account_id = %s AND status <> 'posted'",
        (account_id,),
    )
