"""Menus: GET /api/menus, and proposals through put_menu, create_menu and
delete_menu (a deleted menu is gone: its proposal says so)."""

from __future__ import annotations

from common.openapi import array, string
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
from content.errors import ContentError, Problems
from content.menus import service
from content.menus.serializers import menu_json

_ITEM = {
    "type": "object",
    "description": "{label, url or entryId, children?: [items]}",
}
_ITEMS = array(_ITEM, max_items=service.MAX_ITEMS)
_LABEL = string(min_length=1, max_length=service.MAX_LABEL)
_NAME = string(pattern=service.MENU_NAME_RE.pattern)


async def list_menus(ctx: Context, principal: Principal, args: Args) -> Json:
    return {"data": [jsonable(menu_json(r)) for r in await service.list_menus(ctx)]}


async def current_menu(ctx: Context, principal: Principal, name: str) -> Json | None:
    try:
        return jsonable(menu_json(await service.get_menu(ctx, name)))
    except ContentError:
        return None


async def _checked(ctx: Context, args: Args) -> list[Json]:
    p = Problems()
    async with ctx.db.connection() as conn:
        items = await service.check_items(conn, args.get("items", []), p)
    with checking():
        p.raise_if_any()
    return items


async def draft_update(ctx: Context, principal: Principal, args: Args) -> Draft:
    before = await current_menu(ctx, principal, args["name"])
    if before is None:
        raise Refused(f"no menu {args['name']!r}; propose_menu_create makes one")
    items = await _checked(ctx, args)
    diff = changes(
        before, {"label": str(args.get("label", before["label"])).strip(), "items": items}
    )
    if not diff:
        raise unchanged(f"the {args['name']} menu")
    return Draft(Target("menu", args["name"]), diff, ("menus.manage",), before)


async def apply_update(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    row, _ = await service.put_menu(ctx, principal, args["name"], dict(args))
    return Applied(jsonable(menu_json(row)))


async def draft_create(ctx: Context, principal: Principal, args: Args) -> Draft:
    if await current_menu(ctx, principal, args["name"]) is not None:
        raise Refused(f"a menu named {args['name']!r} exists; propose_menu_update changes it")
    items = await _checked(ctx, args)
    after = {
        "name": args["name"],
        "label": str(args.get("label", args["name"])).strip(),
        "items": items,
    }
    return Draft(Target("menu", args["name"]), changes(None, after), ("menus.manage",))


async def apply_create(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    return Applied(jsonable(menu_json(await service.create_menu(ctx, principal, dict(args)))))


async def draft_delete(ctx: Context, principal: Principal, args: Args) -> Draft:
    before = await current_menu(ctx, principal, args["name"])
    if before is None:
        raise Refused(f"no menu {args['name']!r}")
    diff = [{"field": "menu", "before": before, "after": None}]
    return Draft(Target("menu", args["name"]), diff, ("menus.manage",), before, recoverable=False)


async def apply_delete(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    await service.delete_menu(ctx, principal, args["name"])
    return Applied(None)


TOOLS = (
    read("list_menus", "content.read", "Every menu and its tree of items.", params({}), list_menus),
    propose(
        "propose_menu_update",
        "menus.manage",
        "Propose a menu's label and items (the whole tree replaces the current one).",
        params({"name": _NAME, "label": _LABEL, "items": _ITEMS}, required=("name", "items")),
        draft=draft_update,
        apply=apply_update,
        current=current_menu,
    ),
    propose(
        "propose_menu_create",
        "menus.manage",
        "Propose a new menu.",
        params({"name": _NAME, "label": _LABEL, "items": _ITEMS}, required=("name",)),
        draft=draft_create,
        apply=apply_create,
    ),
    propose(
        "propose_menu_delete",
        "menus.manage",
        "Propose deleting a menu. Not recoverable: say so to the person.",
        params({"name": _NAME}, required=("name",)),
        draft=draft_delete,
        apply=apply_delete,
        current=current_menu,
    ),
)
