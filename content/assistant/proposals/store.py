"""SQL for content.assistant_proposals."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from common.db import Conn, Json, fetch_all, fetch_one, fetch_val
from common.records import Record


@dataclass(frozen=True)
class Proposal(Record):
    id: str
    conversation_id: str
    user_id: str
    tool: str
    target_kind: str
    target_id: str | None
    arguments: dict[str, Any]
    diff: list[dict[str, Any]]
    needs: list[str]
    recoverable: bool
    target_version: str | None
    target_updated: str | None
    status: str
    refusal: str | None
    result_id: str | None
    created_at: datetime
    decided_at: datetime | None


async def insert(conn: Conn, values: dict[str, Any], now: datetime) -> Proposal:
    row = await fetch_one(
        conn,
        "INSERT INTO content.assistant_proposals (id, conversation_id, user_id, tool,"
        " target_kind, target_id, arguments, diff, needs, recoverable, target_version,"
        " target_updated, created_at) VALUES (%(id)s, %(conversation_id)s, %(user_id)s,"
        " %(tool)s, %(target_kind)s, %(target_id)s, %(arguments)s, %(diff)s, %(needs)s,"
        " %(recoverable)s, %(target_version)s, %(target_updated)s, %(now)s) RETURNING *",
        {
            **values,
            "arguments": Json(values["arguments"]),
            "diff": Json(values["diff"]),
            "now": now,
        },
    )
    assert row is not None
    return Proposal.from_row(row)


async def get(conn: Conn, proposal_id: str, user_id: str) -> Proposal | None:
    """A person's own proposal; another person's is not found."""
    row = await fetch_one(
        conn,
        "SELECT * FROM content.assistant_proposals WHERE id = %s AND user_id = %s",
        (proposal_id, user_id),
    )
    return Proposal.from_optional(row)


async def list_for(
    conn: Conn,
    user_id: str,
    *,
    conversation: str | None,
    status: str | None,
    limit: int,
    offset: int,
) -> tuple[list[Proposal], int]:
    where = ["user_id = %(user)s"]
    params: dict[str, Any] = {"user": user_id, "limit": limit, "offset": offset}
    if conversation is not None:
        where.append("conversation_id = %(conversation)s")
        params["conversation"] = conversation
    if status is not None:
        where.append("status = %(status)s")
        params["status"] = status
    clause = " AND ".join(where)
    rows = await fetch_all(
        conn,
        f"SELECT * FROM content.assistant_proposals WHERE {clause}"
        " ORDER BY created_at DESC, id DESC LIMIT %(limit)s OFFSET %(offset)s",
        params,
    )
    total = await fetch_val(
        conn, f"SELECT count(*) FROM content.assistant_proposals WHERE {clause}", params
    )
    return [Proposal.from_row(r) for r in rows], int(total)


async def claim(conn: Conn, proposal_id: str, user_id: str) -> Proposal | None:
    """Pending -> applying, for exactly one caller: a proposal applies once."""
    row = await fetch_one(
        conn,
        "UPDATE content.assistant_proposals SET status = 'applying'"
        " WHERE id = %s AND user_id = %s AND status = 'pending' RETURNING *",
        (proposal_id, user_id),
    )
    return Proposal.from_optional(row)


async def decide(
    conn: Conn,
    proposal_id: str,
    status: str,
    now: datetime | None,
    *,
    refusal: str | None = None,
    result_id: str | None = None,
    only_from: tuple[str, ...] = ("applying",),
) -> Proposal | None:
    row = await fetch_one(
        conn,
        "UPDATE content.assistant_proposals SET status = %s, decided_at = %s, refusal = %s,"
        " result_id = coalesce(%s, result_id) WHERE id = %s AND status = ANY(%s) RETURNING *",
        (status, now, refusal, result_id, proposal_id, list(only_from)),
    )
    return Proposal.from_optional(row)
