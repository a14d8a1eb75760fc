"""/api/assistant/proposals: a person reviews their assistant's proposals.

Sessions only: a proposal belongs to the person whose conversation made it,
and no agent key uses the assistant (spec, Authentication rule 5). Another
person's proposal is not found.
"""

from __future__ import annotations

import functools

from aiohttp import web

from common.openapi import array, boolean, obj, operation, string
from common.web import json_response
from content.assistant.proposals import service
from content.assistant.proposals.serializers import proposal_json
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.errors import Forbidden, invalid
from content.http import page_body, paging, read_body
from content.openapi import PAGE, PAGING

routes = web.RouteTableDef()

NO_STORE = {"Cache-Control": "no-store"}
_ANY = {"type": "object"}
_NULLABLE = string(nullable=True)
PROPOSAL = obj(
    {
        "id": string(),
        "conversationId": string(),
        "userId": string(),
        "tool": string(),
        "target": obj({"kind": string(), "id": _NULLABLE}, required=["kind", "id"]),
        "arguments": _ANY,
        "diff": array(_ANY),
        "needs": array(string()),
        "recoverable": boolean(),
        "targetVersion": _NULLABLE,
        "targetUpdatedAt": _NULLABLE,
        "status": string(enum=service.STATUSES),
        "refusal": _NULLABLE,
        "resultId": _NULLABLE,
        "createdAt": string(),
        "decidedAt": _NULLABLE,
    },
    required=["id", "tool", "target", "diff", "status"],
)
APPLY_BODY = obj(
    {
        "clientSecret": string(max_length=2000, description="propose_social_app: pasted here"),
        "currentPassword": string(description="propose_person_role into or out of admin"),
    }
)
APPLIED = obj(
    {"proposal": PROPOSAL, "result": {}, "secret": _ANY},
    required=["proposal", "result"],
)


def person_route(fn):  # type: ignore[no-untyped-def]
    """admin_route for a person's own proposals: a session, never an agent key."""

    @functools.wraps(fn)
    async def session_only(request: web.Request, principal: Principal) -> web.StreamResponse:
        if principal.kind != "session":
            raise Forbidden(
                "the assistant's proposals take a person's session, never an agent key",
                "KEY_FORBIDDEN",
            )
        return await fn(request, principal)

    return admin_route()(session_only)


@routes.get("/api/assistant/proposals")
@person_route
@operation(
    auth="admin",
    query={
        **PAGING,
        "conversation": string(),
        "status": string(enum=[*service.STATUSES, ""]),
    },
    response=PAGE,
)
async def list_proposals(request: web.Request, principal: Principal) -> web.Response:
    """Your proposals, newest first; ?conversation= and ?status= narrow them."""
    status = request.query.get("status") or None
    if status is not None and status not in service.STATUSES:
        raise invalid("status", f"must be one of {', '.join(service.STATUSES)}")
    page = paging(request)
    rows, total = await service.list_proposals(
        context(request),
        principal,
        conversation=request.query.get("conversation") or None,
        status=status,
        paging=page,
    )
    return json_response(page_body([proposal_json(r) for r in rows], page, total))


@routes.get("/api/assistant/proposals/{id}")
@person_route
@operation(auth="admin", response=PROPOSAL)
async def get_proposal(request: web.Request, principal: Principal) -> web.Response:
    found = await service.get_proposal(context(request), principal, request.match_info["id"])
    return json_response(proposal_json(found))


@routes.post("/api/assistant/proposals/{id}/apply")
@person_route
@operation(auth="admin", body=APPLY_BODY, response=APPLIED, errors=(409,))
async def apply_proposal(request: web.Request, principal: Principal) -> web.Response:
    """Apply once, through the manual edit's own service, as you; a key or secret
    it creates is in this answer only."""
    body = await read_body(request)
    answer = await service.apply(context(request), principal, request.match_info["id"], body)
    return json_response(answer, headers=NO_STORE)


@routes.post("/api/assistant/proposals/{id}/dismiss")
@person_route
@operation(auth="admin", response=PROPOSAL, errors=(409,))
async def dismiss_proposal(request: web.Request, principal: Principal) -> web.Response:
    found = await service.dismiss(context(request), principal, request.match_info["id"])
    return json_response(proposal_json(found))
