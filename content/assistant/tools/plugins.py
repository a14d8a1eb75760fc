"""Plugins: GET /api/plugins, and PATCH /api/plugins/:name's two changes as
proposals, enabling or disabling, and settings (only keys the plugin declares,
each value checked by the plugin's own declaration)."""

from __future__ import annotations

from common.openapi import boolean, string
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
from content.plugins import service
from content.plugins.loader import check_setting


async def list_plugins(ctx: Context, principal: Principal, args: Args) -> Json:
    return {"data": jsonable(await service.list_plugins(ctx, ctx.plugins))}


async def current_plugin(ctx: Context, principal: Principal, name: str) -> Json | None:
    try:
        return jsonable(await service.get_plugin(ctx, ctx.plugins, name))
    except ContentError:
        return None


async def _plugin(ctx: Context, principal: Principal, name: str) -> Json:
    before = await current_plugin(ctx, principal, name)
    if before is None:
        raise Refused(f"no plugin named {name!r}; list_plugins names them")
    return before


async def draft_state(ctx: Context, principal: Principal, args: Args) -> Draft:
    before = await _plugin(ctx, principal, args["name"])
    if before["enabled"] == args["enabled"] and before["status"] != "paused":
        raise unchanged(f"the {args['name']} plugin")
    if args["enabled"] and before["status"] in ("failed", "missing"):
        raise Refused(f"the {args['name']} plugin is not loaded ({before['status']})")
    # Enabling counts as installing (PATCH /api/plugins/:name).
    needs = ("plugins.manage", "plugins.install") if args["enabled"] else ("plugins.manage",)
    diff = changes(before, {"enabled": args["enabled"]})
    if before["status"] == "paused" and args["enabled"]:
        diff = [{"field": "status", "before": "paused", "after": "active"}]
    return Draft(Target("plugin", args["name"]), diff, needs, before)


async def apply_state(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    body = {"enabled": args["enabled"]}
    return Applied(
        jsonable(await service.update_plugin(ctx, ctx.plugins, principal, args["name"], body))
    )


async def draft_settings(ctx: Context, principal: Principal, args: Args) -> Draft:
    before = await _plugin(ctx, principal, args["name"])
    loaded = ctx.plugins.loaded.get(args["name"])
    if loaded is None:
        raise Refused(f"the {args['name']} plugin is not loaded ({before['status']})")
    declared = {s.key: s for s in loaded.plugin.settings}
    p = Problems()
    after: Json = {}
    for key, value in args["settings"].items():
        setting = declared.get(key)
        if setting is None:
            p.add(
                f"settings.{key}",
                f"is not a setting of the {args['name']} plugin ({', '.join(declared) or 'none'})",
            )
        elif value is None:
            after[key] = setting.default
        else:
            clean, problem = check_setting(setting, value)
            if problem is not None:
                p.add(f"settings.{key}", f"{problem} ({setting.type})")
            after[key] = clean
    with checking():
        p.raise_if_any()
    diff = changes(before["settings"], after, "settings.")
    if not diff:
        raise unchanged(f"the {args['name']} plugin's settings")
    return Draft(Target("plugin", args["name"]), diff, ("plugins.manage",), before)


async def apply_settings(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    body = {"settings": args["settings"]}
    return Applied(
        jsonable(await service.update_plugin(ctx, ctx.plugins, principal, args["name"], body))
    )


_NAME = string(min_length=1, max_length=100)

TOOLS = (
    read(
        "list_plugins",
        "plugins.manage",
        "Every plugin with its state, declared settings and their values, and last error.",
        params({}),
        list_plugins,
    ),
    propose(
        "propose_plugin_state",
        "plugins.manage",
        "Propose enabling or disabling a plugin.",
        params({"name": _NAME, "enabled": boolean()}, required=("name", "enabled")),
        draft=draft_state,
        apply=apply_state,
        current=current_plugin,
    ),
    propose(
        "propose_plugin_settings",
        "plugins.manage",
        "Propose values of a plugin's declared settings (only keys its settingsSchema names;"
        " null restores a default).",
        params(
            {"name": _NAME, "settings": {"type": "object", "minProperties": 1}},
            required=("name", "settings"),
        ),
        draft=draft_settings,
        apply=apply_settings,
        current=current_plugin,
    ),
)
