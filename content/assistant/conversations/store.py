"""SQL for assistant_conversations and assistant_messages, connection first."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_one, fetch_val

Row = dict[str, Any]


async def create(conn: Conn, conversation_id: str, user_id: str, title: str, now: datetime) -> Row:
    row = await fetch_one(
        conn,
        "INSERT INTO content.assistant_conversations (id, user_id, title, created_at, updated_at)"
        " VALUES (%s, %s, %s, %s, %s) RETURNING *",
        (conversation_id, user_id, title, now, now),
    )
    assert row is not None
    return row


async def page(conn: Conn, user_id: str, limit: int, offset: int) -> tuple[list[Row], int]:
    rows = await fetch_all(
        conn,
        "SELECT * FROM content.assistant_conversations WHERE user_id = %s"
        " ORDER BY updated_at DESC, id LIMIT %s OFFSET %s",
        (user_id, limit, offset),
    )
    total = await fetch_val(
        conn, "SELECT count(*) FROM content.assistant_conversations WHERE user_id = %s", (user_id,)
    )
    return rows, int(total)


async def get(conn: Conn, conversation_id: str, user_id: str) -> Row | None:
    """The person's own conversation; another person's is not found."""
    return await fetch_one(
        conn,
        "SELECT * FROM content.assistant_conversations WHERE id = %s AND user_id = %s",
        (conversation_id, user_id),
    )


async def messages(conn: Conn, conversation_id: str) -> list[Row]:
    return await fetch_all(
        conn,
        "SELECT id, role, content, created_at FROM content.assistant_messages"
        " WHERE conversation_id = %s ORDER BY id",
        (conversation_id,),
    )


async def add_message(
    conn: Conn, conversation_id: str, role: str, content: dict[str, Any], now: datetime
) -> int:
    message_id = await fetch_val(
        conn,
        "INSERT INTO content.assistant_messages (conversation_id, role, content, created_at)"
        " VALUES (%s, %s, %s, %s) RETURNING id",
        (conversation_id, role, Json(content), now),
    )
    await execute(
        conn,
        "UPDATE content.assistant_conversations SET updated_at = %s WHERE id = %s",
        (now, conversation_id),
    )
    return int(message_id)


async def delete(conn: Conn, conversation_id: str, user_id: str) -> bool:
    return (
        await execute(
            conn,
            "DELETE FROM content.assistant_conversations WHERE id = %s AND user_id = %s",
            (conversation_id, user_id),
        )
        > 0
    )


async def set_title(conn: Conn, conversation_id: str, title: str) -> None:
    await execute(
        conn,
        "UPDATE content.assistant_conversations SET title = %s WHERE id = %s",
        (title, conversation_id),
    )
