"""/api/social (sessions only) and the public consent callback /social/oauth/callback.

Authors write posts (social.write), editors schedule and publish
(social.publish), admins set up networks (social.manage) and connect
accounts (social.connect, which no key can hold). The spec makes these
routes session-gated: an agent key is refused on every one of them.
"""

from __future__ import annotations

import functools
from datetime import datetime

from aiohttp import web

from common.openapi import array, boolean, integer, obj, operation, string
from common.web import json_response
from content.auth.credentials import SESSION_COOKIE, admin_route
from content.auth.principal import Principal
from content.context import context
from content.errors import Forbidden, Problems
from content.http import page_body, paging, read_body
from content.openapi import PAGE, PAGING
from content.social import service
from content.social.registry import NETWORKS

routes = web.RouteTableDef()

STATUSES = ("draft", "scheduled", "publishing", "published", "partial", "failed")
_ANY = {"type": "object"}
POST_BODY = obj(
    {
        "text": string(max_length=70000),
        "link": string(nullable=True, max_length=2000),
        "media": array(string(), max_items=20),
        "accounts": array(string()),
    }
)
POST = obj(
    {
        "id": string(),
        "text": string(),
        "status": string(enum=STATUSES),
        "targets": array(_ANY),
    },
    required=["id", "text", "status", "targets"],
    additional=True,
)
LIST = obj({"data": array(_ANY)}, required=["data"])
NETWORK = string(enum=list(NETWORKS))


def social_route(permission: str):  # type: ignore[no-untyped-def]
    """admin_route for social: a person's session only (spec, Authentication rule 10)."""

    def wrap(fn):  # type: ignore[no-untyped-def]
        @functools.wraps(fn)
        async def session_only(request: web.Request, principal: Principal) -> web.StreamResponse:
            if principal.kind != "session":
                raise Forbidden(
                    "social routes take a person's session, never an agent key",
                    "KEY_FORBIDDEN",
                    {"permission": permission},
                )
            return await fn(request, principal)

        return admin_route(permission)(session_only)

    return wrap


@routes.get("/api/social/overview")
@social_route("social.write")
@operation(auth="admin", response=obj({"counts": _ANY, "attention": array(_ANY)}, additional=True))
async def overview(request: web.Request, principal: Principal) -> web.Response:
    """Counts by status, next and last sent, connections needing attention."""
    return json_response(await service.overview(context(request)))


@routes.get("/api/social/networks")
@social_route("social.write")
@operation(auth="admin", response=LIST)
async def networks(request: web.Request, principal: Principal) -> web.Response:
    """The networks, their rules (limits and options) and live accounts."""
    return json_response({"data": await service.networks(context(request))})


@routes.get("/api/social/posts")
@social_route("social.write")
@operation(auth="admin", query={**PAGING, "status": string(enum=STATUSES)}, response=PAGE)
async def list_posts(request: web.Request, principal: Principal) -> web.Response:
    status = request.query.get("status") or None
    if status is not None and status not in STATUSES:
        problems = Problems()
        problems.add("status", f"one of {', '.join(STATUSES)}")
        problems.raise_if_any()
    pages = paging(request)
    rows, total = await service.list_posts(
        context(request), status, pages.limit, (pages.page - 1) * pages.limit
    )
    return json_response(page_body(rows, pages, total))


@routes.post("/api/social/posts")
@social_route("social.write")
@operation(auth="admin", status=201, body=POST_BODY, response=POST)
async def create_post(request: web.Request, principal: Principal) -> web.Response:
    """A post and one target per selected account (every connected one when absent)."""
    body = await read_body(request)
    post = await service.create_post(context(request), principal, body)
    return json_response(post, status=201)


@routes.get("/api/social/posts/{id}")
@social_route("social.write")
@operation(auth="admin", response=POST)
async def get_post(request: web.Request, principal: Principal) -> web.Response:
    return json_response(await service.get_post(context(request), request.match_info["id"]))


@routes.put("/api/social/posts/{id}")
@social_route("social.write")
@operation(auth="admin", body=POST_BODY, response=POST)
async def update_post(request: web.Request, principal: Principal) -> web.Response:
    """A target already posted keeps its copy and link; the others are rewritten."""
    body = await read_body(request)
    post = await service.update_post(context(request), principal, request.match_info["id"], body)
    return json_response(post)


@routes.delete("/api/social/posts/{id}")
@social_route("social.write")
@operation(auth="admin", status=204)
async def delete_post(request: web.Request, principal: Principal) -> web.Response:
    """Soft delete; what was sent stays on the networks."""
    await service.delete_post(context(request), principal, request.match_info["id"])
    return web.Response(status=204)


@routes.post("/api/social/posts/{id}/schedule")
@social_route("social.publish")
@operation(auth="admin", body=obj({"at": string()}, required=["at"]), response=POST)
async def schedule_post(request: web.Request, principal: Principal) -> web.Response:
    body = await read_body(request)
    post = await service.schedule_post(context(request), principal, request.match_info["id"], body)
    return json_response(post)


@routes.post("/api/social/posts/{id}/publish")
@social_route("social.publish")
@operation(auth="admin", response=POST)
async def publish_post(request: web.Request, principal: Principal) -> web.Response:
    """Send now; doubles as retry (posted targets are skipped, backoff is overridden)."""
    post = await service.publish_post(context(request), principal, request.match_info["id"])
    return json_response(post)


@routes.post("/api/social/posts/{id}/cancel")
@social_route("social.publish")
@operation(auth="admin", response=POST)
async def cancel_post(request: web.Request, principal: Principal) -> web.Response:
    post = await service.cancel_post(context(request), principal, request.match_info["id"])
    return json_response(post)


@routes.get("/api/social/calendar")
@social_route("social.write")
@operation(
    auth="admin", query={"from": string(), "days": integer(minimum=1, maximum=92)}, response=LIST
)
async def calendar(request: web.Request, principal: Principal) -> web.Response:
    """Posts scheduled (or sent) in [from, from + days); from defaults to now, days to 7."""
    ctx = context(request)
    raw_from = request.query.get("from")
    start = ctx.clock.now() if not raw_from else _from(raw_from)
    problems = Problems()
    days = 7
    raw_days = request.query.get("days")
    if raw_days:
        if not raw_days.isdigit() or not 1 <= int(raw_days) <= 92:
            problems.add("days", "a whole number from 1 to 92")
        else:
            days = int(raw_days)
    problems.raise_if_any()
    return json_response({"data": await service.calendar(ctx, start, days)})


def _from(raw: str) -> datetime:
    # A date alone is its midnight UTC.
    return service.parse_moment(raw + "T00:00:00+00:00" if len(raw) == 10 else raw, "from")


@routes.get("/api/social/settings")
@social_route("social.manage")
@operation(auth="admin", response=LIST)
async def get_settings(request: web.Request, principal: Principal) -> web.Response:
    """Each network's app, where its credentials came from, and a walkthrough."""
    return json_response({"data": await service.get_settings(context(request))})


SETTINGS_BODY = obj(
    {
        "clientId": string(max_length=500),
        "clientSecret": string(max_length=2000),
        "enabled": boolean(),
        "endpoints": obj({k: string(nullable=True) for k in service.ENDPOINT_NAMES}),
    }
)


@routes.put("/api/social/settings/{network}")
@social_route("social.manage")
@operation(auth="admin", body=SETTINGS_BODY, response=LIST)
async def put_settings(request: web.Request, principal: Principal) -> web.Response:
    """Absent clientSecret keeps the stored one; an empty string clears it."""
    body = await read_body(request)
    ctx = context(request)
    await service.put_settings(ctx, principal, request.match_info["network"], body)
    return json_response({"data": await service.get_settings(ctx)})


@routes.delete("/api/social/settings/{network}")
@social_route("social.manage")
@operation(auth="admin", status=204)
async def delete_settings(request: web.Request, principal: Principal) -> web.Response:
    """Forget the app; connected accounts keep working until their tokens lapse."""
    await service.delete_settings(context(request), principal, request.match_info["network"])
    return web.Response(status=204)


@routes.get("/api/social/accounts")
@social_route("social.manage")
@operation(auth="admin", response=LIST)
async def list_accounts(request: web.Request, principal: Principal) -> web.Response:
    return json_response({"data": await service.list_accounts(context(request))})


START_BODY = obj(
    {
        "returnTo": string(max_length=500),
        "instance": string(max_length=500),
        "identifier": string(max_length=300),
        "password": string(max_length=300),
        "service": string(max_length=500),
    }
)


@routes.post("/api/social/accounts/{network}/start")
@social_route("social.connect")
@operation(
    auth="admin",
    body=START_BODY,
    response=obj({"url": string(nullable=True), "account": {"type": ["object", "null"]}}),
)
async def start(request: web.Request, principal: Principal) -> web.Response:
    """A consent URL (not a redirect); app-password networks connect at once."""
    body = await read_body(request)
    out = await service.start(context(request), principal, request.match_info["network"], body)
    return json_response(out)


@routes.delete("/api/social/accounts/{id}")
@social_route("social.connect")
@operation(auth="admin", status=204)
async def disconnect(request: web.Request, principal: Principal) -> web.Response:
    await service.disconnect(context(request), principal, request.match_info["id"])
    return web.Response(status=204)


@routes.get(service.CALLBACK_PATH)
@operation(
    auth=None,
    status=303,
    query={"state": string(), "code": string(), "error": string(), "error_description": string()},
)
async def oauth_callback(request: web.Request) -> web.Response:
    """Return leg of a network's consent (top-level navigation, no bearer token)."""
    query = {k: v for k, v in request.query.items() if isinstance(v, str)}
    try:
        where = await service.callback(context(request), query, request.cookies.get(SESSION_COOKIE))
    except service.CallbackRefused as exc:
        return json_response(
            {"error": str(exc), "code": "SOCIAL_STATE_INVALID", "details": {}},
            status=400,
            headers={"Cache-Control": "no-store"},
        )
    raise web.HTTPSeeOther(
        where, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
    )
