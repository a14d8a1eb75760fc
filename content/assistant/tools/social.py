"""Social publishing: GET /api/social/accounts (the setup: networks, apps,
connected accounts), GET /api/social/settings (the guide: each network's app,
where its credentials come from, and the walkthrough; a stored secret only as
its last four characters), GET /api/social/posts, and the two proposals.

propose_social_app carries a network's client id, enabled switch and endpoint
overrides, never a secret: the person pastes the client secret into the apply
body (``clientSecret``) if the network needs one, so the model never sees it.
Connecting an account stays a manual step. propose_social_post creates a
post through create_post (checked first by ``check_post``, the same rules,
writing nothing) and, when it names a time, schedules it through
schedule_post, which needs social.publish.
"""

from __future__ import annotations

from common.openapi import array, boolean, integer, obj, string
from content.assistant.tools.base import (
    Applied,
    Args,
    Draft,
    Json,
    Refused,
    Target,
    changes,
    checking,
    jsonable,
    offset_meta,
    params,
    propose,
    read,
    unchanged,
    window,
)
from content.auth.principal import Principal
from content.context import Context
from content.errors import ContentError, Problems
from content.social import service
from content.social.registry import NETWORKS

STATUSES = ("draft", "scheduled", "publishing", "published", "partial", "failed")


async def get_social_setup(ctx: Context, principal: Principal, args: Args) -> Json:
    return {"data": jsonable(await service.list_accounts(ctx))}


async def get_social_guide(ctx: Context, principal: Principal, args: Args) -> Json:
    rows = jsonable(await service.get_settings(ctx))
    if "network" in args:
        rows = [r for r in rows if r["network"] == args["network"]]
    return {"data": rows}


async def list_social_posts(ctx: Context, principal: Principal, args: Args) -> Json:
    paging = window(args)
    rows, total = await service.list_posts(ctx, args.get("status"), paging.limit, paging.offset)
    return {"data": jsonable(rows), "meta": offset_meta(total, paging)}


async def current_app(ctx: Context, principal: Principal, network: str) -> Json | None:
    rows = (await get_social_guide(ctx, principal, {"network": network}))["data"]
    return rows[0] if rows else None


async def draft_app(ctx: Context, principal: Principal, args: Args) -> Draft:
    before = await current_app(ctx, principal, args["network"])
    assert before is not None  # the schema names only known networks
    after = {k: v for k, v in args.items() if k != "network"}
    if "clientId" in after:
        after["clientId"] = after["clientId"].strip()
    if "endpoints" in after:
        after["endpoints"] = {k: v for k, v in after["endpoints"].items() if v}
    diff = changes(before, after)
    if not diff:
        raise unchanged(f"the {args['network']} app")
    return Draft(Target("social_app", args["network"]), diff, ("social.manage",), before)


async def apply_app(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    body = {k: v for k, v in args.items() if k != "network"}
    # The secret comes from the person applying (the apply body), never the proposal.
    body.update(extra)
    await service.put_settings(ctx, principal, args["network"], body)
    return Applied(await current_app(ctx, principal, args["network"]))


async def draft_post(ctx: Context, principal: Principal, args: Args) -> Draft:
    needs: tuple[str, ...] = ("social.write",)
    if "at" in args:
        needs = ("social.write", "social.publish")
        if not principal.can("social.publish"):
            raise Refused(
                f"scheduling needs social.publish, which the {principal.user.role} role does not"
                " have; propose the post without a time"
            )
        with checking():
            at = service.parse_moment(args["at"], "at")
        if at <= ctx.clock.now():
            raise Refused("at: must be in the future")
    with checking():
        copy = await service.check_post(ctx, {k: v for k, v in args.items() if k != "at"})
    after = {**copy, **({"scheduledAt": args["at"]} if "at" in args else {})}
    return Draft(Target("social_post", None), changes(None, after), needs)


async def apply_post(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    if "at" in args and service.parse_moment(args["at"], "at") <= ctx.clock.now():
        problems = Problems()
        problems.add("at", "must be in the future; ask for a new time")
        problems.raise_if_any()
    post = await service.create_post(ctx, principal, {k: v for k, v in args.items() if k != "at"})
    if "at" in args:
        try:
            post = await service.schedule_post(ctx, principal, post["id"], {"at": args["at"]})
        except ContentError as exc:
            # The post exists now: applying again would make a second one. It
            # stays a draft, and the answer says why it was not scheduled.
            return Applied({**jsonable(post), "notScheduled": exc.message})
    return Applied(jsonable(post))


_NETWORK = string(enum=list(NETWORKS))

TOOLS = (
    read(
        "get_social_setup",
        "social.manage",
        "Every network: whether an app is set up and which accounts are connected.",
        params({}),
        get_social_setup,
    ),
    read(
        "get_social_guide",
        "social.manage",
        "Each network's app settings, where its credentials come from, its callback URL and"
        " the walkthrough to register an app.",
        params({"network": _NETWORK}),
        get_social_guide,
    ),
    read(
        "list_social_posts",
        "social.write",
        "Social posts, newest first, with each network target's outcome.",
        params(
            {
                "status": string(enum=STATUSES),
                "offset": integer(minimum=0, maximum=999_999_999),
                "limit": integer(minimum=1, maximum=100),
            }
        ),
        list_social_posts,
    ),
    propose(
        "propose_social_app",
        "social.manage",
        "Propose a network's app: client id, enabled switch, endpoint overrides. Never ask"
        " for the client secret: the person pastes it when applying.",
        params(
            {
                "network": _NETWORK,
                "clientId": string(max_length=500),
                "enabled": boolean(),
                "endpoints": obj({k: string(nullable=True) for k in service.ENDPOINT_NAMES}),
            },
            required=("network",),
        ),
        draft=draft_app,
        apply=apply_app,
        current=current_app,
        apply_body=params({"clientSecret": string(max_length=2000)}),
    ),
    propose(
        "propose_social_post",
        "social.write",
        "Propose a social post for connected accounts (all when accounts is absent); with"
        " `at` (ISO 8601, future) it is scheduled, which needs social.publish.",
        params(
            {
                "text": string(max_length=70000),
                "link": string(nullable=True, max_length=2000),
                "media": array(string(), max_items=20),
                "accounts": array(string()),
                "at": string(description="ISO 8601 with offset"),
            },
            required=("text",),
        ),
        draft=draft_post,
        apply=apply_post,
    ),
)
