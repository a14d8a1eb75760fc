"""GET /api/addresses/{address_id}/folders and /activity (another account's: 404)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.openapi import operation, string
from common.web import json_response
from mail.auth import sessions
from mail.context import mail_context
from mail.errors import invalid_parameter
from mail.mailboxes import service
from mail.openapi import LIST, list_query
from mail.web.lists import Sorts, list_envelope, parse_list_params
from mail.web.ownership import parse_id
from mta.mailstore import Activity, Folder

routes = web.RouteTableDef()

# Activity is a log: newest first, no other order.
ACTIVITY_SORTS = Sorts(columns={"created_at": "created_at"}, default="created_at")
# sent, deferred and bounced: the outbound attempts of a hosted sender (mta/outbound).
ACTIVITY_KINDS = ("received", "filtered", "refused", "failed", "sent", "deferred", "bounced")


@routes.get("/api/addresses/{address_id}/folders")
@operation(auth="session")
async def folders(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    address_id = parse_id(request, "address_id")
    rows, (used, count) = await service.folders(ctx, auth.account.id, address_id)
    data = [_folder(r) for r in rows]
    return json_response(
        {
            "object": "list",
            "data": data,
            "total": len(data),
            "usage": {"object": "quota_usage", "used_bytes": used, "emails": count},
        }
    )


def _folder(row: Folder) -> dict[str, Any]:
    return {
        "object": "folder",
        "id": str(row.id),
        "name": row.name,
        "parent_id": _str(row.parent_id),
        "role": row.role,
        "sort_order": row.sort_order,
        "total": row.total_emails,
        "unread": row.unread_emails,
        "created_at": row.created_at,
    }


@routes.get("/api/addresses/{address_id}/activity")
@operation(
    response=LIST,
    query={**list_query(ACTIVITY_SORTS), "kind": string(enum=[*ACTIVITY_KINDS, ""])},
    auth="session",
)
async def recent_activity(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = sessions.require(request)
    address_id = parse_id(request, "address_id")
    params = parse_list_params(request.query, ACTIVITY_SORTS)
    kind = request.query.get("kind") or None
    if kind is not None and kind not in ACTIVITY_KINDS:
        raise invalid_parameter(f"kind must be one of {', '.join(ACTIVITY_KINDS)}")
    rows, total = await service.activity(
        ctx, auth.account.id, address_id, limit=params.limit, offset=params.offset, kind=kind
    )
    return json_response(list_envelope([_event(r) for r in rows], params, total))


def _event(row: Activity) -> dict[str, Any]:
    return {
        "object": "activity",
        "id": str(row.id),
        "kind": row.kind,
        "time": row.created_at,
        "peer": row.peer,
        "sender": row.sender,
        "subject": row.subject,
        "outcome": row.outcome,
        "detail": row.detail,
        "email_id": _str(row.email_id),
    }


def _str(value: object) -> str | None:
    return None if value is None else str(value)
