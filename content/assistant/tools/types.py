"""Content types: GET /api/types, and proposals through create_type and update_type.

Arguments are checked by the service's own ``clean_type`` (field definitions,
preview URL template) before a proposal exists.
"""

from __future__ import annotations

from common.openapi import array, boolean, string
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
from content.errors import ContentError
from content.types import service
from content.types import store as type_store
from content.types.serializers import type_json
from content.types.service import TYPE_NAME_RE

_FIELDS = array(
    {"type": "object", "description": "a field definition: {key, type, label, ...options}"}
)


async def list_content_types(ctx: Context, principal: Principal, args: Args) -> Json:
    rows = await service.list_types(ctx)
    return {"data": [jsonable(type_json(r)) for r in rows]}


async def current_type(ctx: Context, principal: Principal, name: str) -> Json | None:
    try:
        return jsonable(type_json(await service.get_type(ctx, name)))
    except ContentError:
        return None


def _field_diff(before: list[Json], after: list[Json]) -> list[Json]:
    """One row per field key added, removed or redefined."""
    old = {str(d.get("key")): d for d in before}
    new = {str(d.get("key")): d for d in after}
    keys = [*old, *(k for k in new if k not in old)]
    return changes(old, {k: new.get(k) for k in keys}, "fields.")


async def _names(ctx: Context) -> set[str]:
    async with ctx.db.connection() as conn:
        return await type_store.type_names(conn)


async def draft_create(ctx: Context, principal: Principal, args: Args) -> Draft:
    names = await _names(ctx)
    if args["name"] in names:
        raise Refused(
            f"a content type named {args['name']!r} exists; propose_type_update changes it"
        )
    with checking():
        values = service.clean_type(args, names, existing=None)
    after = {
        "name": values.name,
        "label": values.label,
        "single": values.single,
        "previewUrl": values.preview_url,
    }
    diff = changes(None, after) + _field_diff([], values.fields)
    return Draft(Target("type", values.name), diff, ("types.manage",))


async def apply_create(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    return Applied(jsonable(type_json(await service.create_type(ctx, principal, dict(args)))))


async def draft_update(ctx: Context, principal: Principal, args: Args) -> Draft:
    async with ctx.db.connection() as conn:
        existing = await type_store.get_type(conn, args["name"])
        names = await type_store.type_names(conn)
    if existing is None:
        raise Refused(f"no content type {args['name']!r}; list_content_types names them")
    with checking():
        values = service.clean_type(args, names, existing=existing)
    before = jsonable(type_json(existing))
    after = {"label": values.label, "single": values.single, "previewUrl": values.preview_url}
    diff = changes(before, after) + _field_diff(existing.fields, values.fields)
    if not diff:
        raise unchanged(f"the {existing.name} type")
    return Draft(Target("type", existing.name), diff, ("types.manage",), before)


async def apply_update(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    body = {k: v for k, v in args.items() if k != "name"}
    row = await service.update_type(ctx, principal, args["name"], body)
    return Applied(jsonable(type_json(row)))


_TYPE = {
    "name": string(pattern=TYPE_NAME_RE.pattern),
    "label": string(min_length=1, max_length=200),
    "fields": _FIELDS,
    "single": boolean(),
    "previewUrl": string(nullable=True, description="e.g. /blog/{slug}"),
}

TOOLS = (
    read(
        "list_content_types",
        "content.read",
        "Every content type with its field definitions.",
        params({}),
        list_content_types,
    ),
    propose(
        "propose_type_update",
        "types.manage",
        "Propose changing a content type's label, fields (the whole list), single kind or"
        " preview URL template.",
        params(_TYPE, required=("name",)),
        draft=draft_update,
        apply=apply_update,
        current=current_type,
    ),
    propose(
        "propose_type_create",
        "types.manage",
        "Propose a new content type.",
        params(_TYPE, required=("name",)),
        draft=draft_create,
        apply=apply_create,
    ),
)
