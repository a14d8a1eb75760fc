"""SQL for content.activity: who changed what, and when."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, execute, fetch_all, fetch_val
from common.records import Record
from content.auth.principal import Actor


@dataclass(frozen=True)
class Activity(Record):
    """A row of content.activity: who did what to which subject."""

    id: int
    at: datetime
    actor_kind: str
    user_id: str | None
    key_id: str | None
    actor_name: str
    action: str
    subject_kind: str
    subject_id: str
    # What the change was, in the words of the action that wrote it (free-form JSON).
    summary: dict[str, Any]


def _dumps(value: Any) -> str:
    return json.dumps(value, default=lambda v: v.isoformat() if hasattr(v, "isoformat") else str(v))


async def record(
    conn: Conn,
    *,
    at: datetime,
    actor: Actor,
    action: str,
    subject_kind: str,
    subject_id: str,
    summary: dict[str, Any] | None = None,
) -> None:
    """Record one change, in the transaction that makes it."""
    await execute(
        conn,
        "INSERT INTO content.activity (at, actor_kind, user_id, key_id, actor_name, action,"
        " subject_kind, subject_id, summary) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            at,
            actor.kind,
            actor.user_id,
            actor.key_id,
            actor.name,
            action,
            subject_kind,
            subject_id,
            Json(summary or {}, dumps=_dumps),
        ),
    )


async def list_activity(
    conn: Conn,
    *,
    kinds: list[str] | None,
    subject_kind: str | None,
    subject_id: str | None,
    user_id: str | None,
    limit: int,
    offset: int,
) -> tuple[list[Activity], int]:
    where = ["TRUE"]
    params: dict[str, Any] = {"limit": limit, "offset": offset}
    if kinds is not None:
        where.append("subject_kind = ANY(%(kinds)s)")
        params["kinds"] = kinds
    if subject_kind:
        where.append("subject_kind = %(subject_kind)s")
        params["subject_kind"] = subject_kind
    if subject_id:
        where.append("subject_id = %(subject_id)s")
        params["subject_id"] = subject_id
    if user_id:
        where.append("user_id = %(user_id)s")
        params["user_id"] = user_id
    clause = " AND ".join(where)
    rows = await fetch_all(
        conn,
        f"SELECT * FROM content.activity WHERE {clause}"
        " ORDER BY at DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )
    total = await fetch_val(conn, f"SELECT count(*) FROM content.activity WHERE {clause}", params)
    return [Activity.from_row(r) for r in rows], int(total)
