"""Site settings (GET/PATCH /api/settings) and design surfaces (GET/PATCH /api/design).

Settings are checked with the route's own limits and media-id check; a design
change names only declared properties of a declared surface, each value
checked by the surface's rules (content/design/surfaces.py); ``null`` removes
an override, ``reset`` removes them all (DELETE /api/design/:surface).
"""

from __future__ import annotations

from common.openapi import boolean, obj, string
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
    params,
    propose,
    read,
    unchanged,
)
from content.auth.principal import Principal
from content.context import Context
from content.design import service as design
from content.design.surfaces import check_value
from content.errors import Problems
from content.site import service
from content.site.media import check_media_ids
from content.site.serializers import settings_json
from content.types.fields import MEDIA_ID_RE

_MEDIA = string(pattern=MEDIA_ID_RE.pattern, nullable=True)
SETTINGS = {
    **{key: string(max_length=n, nullable=True) for key, (_, n) in service.TEXT_KEYS.items()},
    "logo": _MEDIA,
    "socialImage": _MEDIA,
}


async def get_site_settings(ctx: Context, principal: Principal, args: Args) -> Json:
    return jsonable(settings_json(await service.get_settings(ctx)))


async def current_settings(ctx: Context, principal: Principal, target: str) -> Json | None:
    return await get_site_settings(ctx, principal, {})


async def draft_settings(ctx: Context, principal: Principal, args: Args) -> Draft:
    if not args:
        raise Refused("name at least one setting to change")
    p = Problems()
    ids = {k: args[k] for k in service.MEDIA_KEYS if isinstance(args.get(k), str)}
    async with ctx.db.connection() as conn:
        await check_media_ids(conn, ids, p)
    with checking():
        p.raise_if_any()
    before = await get_site_settings(ctx, principal, {})
    after = {
        k: ("" if v is None else v.strip()) if k in service.TEXT_KEYS else v
        for k, v in args.items()
    }
    diff = changes(before, after)
    if not diff:
        raise unchanged("the site settings")
    return Draft(Target("settings", "site"), diff, ("settings.manage",), before)


async def apply_settings(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    row = await service.update_settings(ctx, principal, dict(args))
    return Applied(jsonable(settings_json(row)))


async def get_design(ctx: Context, principal: Principal, args: Args) -> Json:
    return {"data": jsonable(await design.get_design(ctx, ctx.design))}


async def current_surface(ctx: Context, principal: Principal, surface_id: str) -> Json | None:
    surfaces = (await get_design(ctx, principal, {}))["data"]
    return next((s for s in surfaces if s["id"] == surface_id), None)


async def draft_design(ctx: Context, principal: Principal, args: Args) -> Draft:
    surface_id = args["surface"]
    async with ctx.db.connection() as conn:
        with checking():
            surface = await ctx.design.surface(conn, surface_id)
    before = await current_surface(ctx, principal, surface_id)
    assert before is not None
    values = args.get("values", {})
    if args.get("reset"):
        if values:
            raise Refused("send either reset or values, not both")
        values = {p.key: None for p in surface.properties}
    elif not values:
        raise Refused("name the properties to change in values (null removes an override)")
    declared = {p.key: p for p in surface.properties}
    p = Problems()
    after: Json = {}
    for key, value in values.items():
        prop = declared.get(key)
        if prop is None:
            p.add(key, f"is not a property of the {surface_id} surface ({', '.join(declared)})")
        elif value is None:
            after[key] = None
        else:
            clean, problem = check_value(prop, value)
            if problem is not None:
                p.add(key, problem)
            after[key] = clean
    with checking():
        p.raise_if_any()
    current = {prop["key"]: prop["value"] for prop in before["properties"]}
    diff = changes(current, after, f"{surface_id}.")
    if not diff:
        raise unchanged(f"the {surface_id} surface")
    return Draft(Target("design", surface_id), diff, ("settings.manage",), before)


async def apply_design(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    reset = bool(args.get("reset"))
    body = {} if reset else dict(args.get("values", {}))
    surface = await design.change_surface(
        ctx, ctx.design, principal, args["surface"], body, reset=reset
    )
    return Applied(jsonable(surface))


TOOLS = (
    read(
        "get_site_settings",
        "content.read",
        "The site's title, tagline, description, logo and social image (media ids).",
        params({}),
        get_site_settings,
    ),
    read(
        "get_design",
        "settings.manage",
        "The declared design surfaces, their properties, defaults and overrides.",
        params({}),
        get_design,
    ),
    propose(
        "propose_settings_update",
        "settings.manage",
        "Propose site settings (only those given change; a media id for logo and socialImage).",
        params(SETTINGS),
        draft=draft_settings,
        apply=apply_settings,
        current=current_settings,
    ),
    propose(
        "propose_design_change",
        "settings.manage",
        "Propose design values of one surface (property -> value; null removes an override),"
        " or reset: true to remove every override.",
        params(
            {
                "surface": string(min_length=1),
                "values": obj({}, additional=string(max_length=200, nullable=True)),
                "reset": boolean(),
            },
            required=("surface",),
        ),
        draft=draft_design,
        apply=apply_design,
        current=current_surface,
    ),
)
