"""The media library: GET /api/media (offset paging), and alt text, captions and
folders proposed through update_media (uploading a file stays a manual step)."""

from __future__ import annotations

from common.openapi import integer, string
from content.assistant.tools.base import (
    Applied,
    Args,
    Draft,
    Json,
    Refused,
    Target,
    changes,
    jsonable,
    params,
    propose,
    read,
    unchanged,
)
from content.auth.principal import Principal
from content.context import Context
from content.errors import ContentError
from content.http import DEFAULT_LIMIT, MAX_LIMIT
from content.media import service
from content.media.serializers import media_json
from content.media.store import MediaFilters

TEXT = {name: string(max_length=limit) for name, limit in service.TEXT_LIMITS.items()}


async def list_media(ctx: Context, principal: Principal, args: Args) -> Json:
    offset = args.get("offset", 0)
    limit = args.get("limit", DEFAULT_LIMIT)
    filters = MediaFilters(
        search=(args.get("search") or "").strip() or None,
        folder=args["folder"].strip("/ ") if "folder" in args else None,
        type_prefix=(args.get("type") or "").strip() or None,
    )
    rows, total = await service.list_media(ctx, filters, offset, limit)
    meta = {"total": total, "offset": offset, "limit": limit}
    return {"data": [jsonable(media_json(r)) for r in rows], "meta": meta}


async def current_media(ctx: Context, principal: Principal, media_id: str) -> Json | None:
    try:
        return jsonable(media_json(await service.get_media(ctx, media_id)))
    except ContentError:
        return None


async def draft_update(ctx: Context, principal: Principal, args: Args) -> Draft:
    body = {k: v for k, v in args.items() if k != "mediaId"}
    if not body:
        raise Refused("name at least one of alt, caption or folder")
    before = await current_media(ctx, principal, args["mediaId"])
    if before is None:
        raise Refused(f"no media {args['mediaId']!r}; list_media or search_site finds files")
    diff = changes(before, {k: v.strip() for k, v in body.items()})
    if not diff:
        raise unchanged("this file")
    return Draft(Target("media", args["mediaId"]), diff, ("media.manage",), before)


async def apply_update(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    body = {k: v for k, v in args.items() if k != "mediaId"}
    row = await service.update_media(ctx, principal, args["mediaId"], body)
    return Applied(jsonable(media_json(row)))


TOOLS = (
    read(
        "list_media",
        "content.read",
        "Files of the media library, newest first; offset pages to older files.",
        params(
            {
                "offset": integer(minimum=0, maximum=999_999_999),
                "limit": integer(minimum=1, maximum=MAX_LIMIT),
                "search": string(description="part of the filename, alt text, caption or folder"),
                "folder": string(description="exactly this folder"),
                "type": string(description="a type or its start: image/ lists images"),
            }
        ),
        list_media,
    ),
    propose(
        "propose_media_update",
        "media.manage",
        "Propose a file's alt text, caption or folder.",
        params({"mediaId": string(min_length=1), **TEXT}, required=("mediaId",)),
        draft=draft_update,
        apply=apply_update,
        current=current_media,
    ),
)
