"""People, delivery keys and webhooks: GET /api/users, /api/delivery-keys and
/api/webhooks, and the proposals through update_user (a role), mint_delivery_key
and create_webhook / update_webhook.

A role is never proposed above the person's own rank. Moving someone into or
out of admin or owner is as sensitive as a password (content/people/service.py,
``takeover_changes``): the person types their current password when applying
(the apply body's ``currentPassword``), never the model. A minted key and a
webhook's signing secret exist only once the proposal is applied; the apply
answer carries them once, and neither the proposal nor the model sees them.
"""

from __future__ import annotations

from common.openapi import array, boolean, integer, string
from common.outbound import MAX_URL, url_problem
from content.assistant.tools.base import (
    Applied,
    Args,
    Draft,
    Json,
    Refused,
    Target,
    changes,
    jsonable,
    offset_meta,
    params,
    propose,
    read,
    unchanged,
    window,
)
from content.auth.permissions import ROLES, outranks
from content.auth.principal import Principal
from content.context import Context
from content.errors import ContentError
from content.keys import service as keys
from content.keys.serializers import delivery_key_json
from content.keys.service import ALL_TYPES
from content.people import service as people
from content.people.serializers import user_json
from content.people.service import MANAGING_ROLES
from content.types.store import type_names
from content.webhooks import service as webhooks
from content.webhooks.events import EVENTS
from content.webhooks.serializers import webhook_json


async def list_people(ctx: Context, principal: Principal, args: Args) -> Json:
    paging = window(args)
    rows, total = await people.list_users(ctx, paging)
    return {"data": [jsonable(user_json(r)) for r in rows], "meta": offset_meta(total, paging)}


async def list_delivery_keys(ctx: Context, principal: Principal, args: Args) -> Json:
    now = ctx.clock.now()
    rows = await keys.list_delivery_keys(ctx)
    return {"data": [jsonable(delivery_key_json(r, now)) for r in rows]}


async def list_webhooks(ctx: Context, principal: Principal, args: Args) -> Json:
    rows = await webhooks.list_webhooks(ctx, principal)
    return {"data": [jsonable(webhook_json(r)) for r in rows]}


async def current_person(ctx: Context, principal: Principal, user_id: str) -> Json | None:
    try:
        return jsonable(user_json(await people.get_user(ctx, user_id)))
    except ContentError:
        return None


async def draft_role(ctx: Context, principal: Principal, args: Args) -> Draft:
    before = await current_person(ctx, principal, args["userId"])
    if before is None:
        raise Refused(f"no person {args['userId']!r}; list_people names them")
    role, mine = args["role"], principal.user.role
    if outranks(mine, role):
        raise Refused(f"a role is never proposed above your own rank ({mine})")
    if outranks(mine, before["role"]):
        raise Refused(f"{before['email']} is {before['role']}, above your own rank ({mine})")
    if role == before["role"]:
        raise unchanged(f"{before['email']}'s role")
    needs: tuple[str, ...] = ("users.manage",)
    if MANAGING_ROLES & {role, before["role"]}:
        # Granting or removing admin is person-only and asks for the password at apply.
        needs = ("users.manage", "users.control")
    diff = changes(before, {"role": role})
    return Draft(Target("user", before["id"]), diff, needs, before)


async def apply_role(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    body = {"role": args["role"], **extra}
    return Applied(
        jsonable(user_json(await people.update_user(ctx, principal, args["userId"], body)))
    )


async def draft_delivery_key(ctx: Context, principal: Principal, args: Args) -> Draft:
    async with ctx.db.connection() as conn:
        known = await type_names(conn)
    unknown = [t for t in args["types"] if t != ALL_TYPES and t not in known]
    if unknown:
        raise Refused(f"types names no content type {', '.join(unknown)}; list_content_types")
    after = {"name": args["name"].strip(), "types": sorted(set(args["types"]))}
    return Draft(Target("delivery_key", None), changes(None, after), ("keys.manage", "keys.mint"))


async def apply_delivery_key(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    row, token = await keys.mint_delivery_key(ctx, principal, dict(args))
    return Applied(jsonable(delivery_key_json(row, ctx.clock.now())), {"key": token})


def _url(ctx: Context, args: Args) -> None:
    if "url" in args:
        problem = url_problem(args["url"], allow_private=ctx.config.webhook_allow_private)
        if problem is not None:
            raise Refused(f"url: {problem}")


def _webhook_values(args: Args) -> Json:
    out = {k: v for k, v in args.items() if k != "webhookId"}
    if "name" in out:
        out["name"] = out["name"].strip()
    if "events" in out:
        out["events"] = sorted(set(out["events"]))
    return out


async def draft_webhook_create(ctx: Context, principal: Principal, args: Args) -> Draft:
    _url(ctx, args)
    after = {"events": [], "enabled": True, **_webhook_values(args)}
    return Draft(Target("webhook", None), changes(None, after), ("webhooks.manage",))


async def apply_webhook_create(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    row, secret = await webhooks.create_webhook(ctx, principal, dict(args))
    return Applied(jsonable(webhook_json(row)), {"secret": secret})


async def current_webhook(ctx: Context, principal: Principal, webhook_id: str) -> Json | None:
    try:
        return jsonable(webhook_json(await webhooks.get_webhook(ctx, principal, webhook_id)))
    except ContentError:
        return None


async def draft_webhook_update(ctx: Context, principal: Principal, args: Args) -> Draft:
    before = await current_webhook(ctx, principal, args["webhookId"])
    if before is None:
        raise Refused(f"no webhook {args['webhookId']!r}; list_webhooks names them")
    _url(ctx, args)
    diff = changes(before, _webhook_values(args))
    if not diff:
        raise unchanged("the webhook")
    return Draft(Target("webhook", before["id"]), diff, ("webhooks.manage",), before)


async def apply_webhook_update(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    body = {k: v for k, v in args.items() if k != "webhookId"}
    row = await webhooks.update_webhook(ctx, principal, args["webhookId"], body)
    return Applied(jsonable(webhook_json(row)))


_WEBHOOK = {
    "name": string(min_length=1, max_length=100),
    "url": string(min_length=1, max_length=MAX_URL),
    "events": array(string(enum=list(EVENTS))),
    "enabled": boolean(),
}

TOOLS = (
    read(
        "list_people",
        "users.manage",
        "The people of this site and their roles, paged by offset.",
        params(
            {
                "offset": integer(minimum=0, maximum=999_999_999),
                "limit": integer(minimum=1, maximum=100),
            }
        ),
        list_people,
    ),
    read(
        "list_delivery_keys",
        "keys.manage",
        "The delivery keys (names, type scopes, state; never the key itself).",
        params({}),
        list_delivery_keys,
    ),
    read(
        "list_webhooks",
        "webhooks.manage",
        "The webhooks (name, target URL, events, enabled; never the secret).",
        params({}),
        list_webhooks,
    ),
    propose(
        "propose_person_role",
        "users.manage",
        "Propose a person's role (never above your own rank).",
        params(
            {"userId": string(min_length=1), "role": string(enum=ROLES)},
            required=("userId", "role"),
        ),
        draft=draft_role,
        apply=apply_role,
        current=current_person,
        apply_body=params(
            {
                "currentPassword": string(
                    description="the applying person's password, asked for when a role"
                    " moves into or out of admin or owner"
                )
            }
        ),
    ),
    propose(
        "propose_delivery_key",
        "keys.manage",
        "Propose a delivery key for a website, scoped to content types (['*'] for all)."
        " The key is shown to the person once, when they apply; never to you.",
        params(
            {
                "name": string(min_length=1, max_length=100),
                "types": array(string(min_length=1), max_items=100) | {"minItems": 1},
            },
            required=("name", "types"),
        ),
        draft=draft_delivery_key,
        apply=apply_delivery_key,
    ),
    propose(
        "propose_webhook_create",
        "webhooks.manage",
        "Propose a webhook (events empty: all of them). Its signing secret is shown to the"
        " person once, when they apply; never to you.",
        params(_WEBHOOK, required=("name", "url")),
        draft=draft_webhook_create,
        apply=apply_webhook_create,
    ),
    propose(
        "propose_webhook_update",
        "webhooks.manage",
        "Propose changing a webhook's name, URL, events or enabled switch.",
        params({"webhookId": string(min_length=1), **_WEBHOOK}, required=("webhookId",)),
        draft=draft_webhook_update,
        apply=apply_webhook_update,
        current=current_webhook,
    ),
)
