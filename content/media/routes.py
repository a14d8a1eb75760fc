"""The media library under /api/media, and the local driver's files under /media/files."""

from __future__ import annotations

from aiohttp import web

from common.openapi import array, integer, obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.errors import ContentError, invalid
from content.http import DEFAULT_LIMIT, MAX_LIMIT, read_body
from content.media import files, service
from content.media.serializers import media_json
from content.media.store import MediaFilters

routes = web.RouteTableDef()

MULTIPART = "multipart/form-data"
TEXT = {name: string(max_length=limit) for name, limit in service.TEXT_LIMITS.items()}
UPLOAD_BODY = obj(
    {
        "file": {
            "type": "string",
            "format": "binary",
            "description": "the file; its type is sniffed from the bytes, never the name",
        },
        **TEXT,
    },
    required=["file"],
)
LIST_QUERY = {
    "offset": {"type": "string", "pattern": "^[0-9]{0,9}$"},
    "limit": {"type": "string", "pattern": f"^([1-9][0-9]{{0,{len(str(MAX_LIMIT)) - 1}}})?$"},
    "search": string(description="part of the filename, alt text, caption or folder"),
    "folder": string(description="exactly this folder"),
    "type": string(description="a type or its start: image/ lists images"),
}
LIST_RESPONSE = obj(
    {
        "data": array({"type": "object"}),
        "meta": obj(
            {
                "total": integer(minimum=0),
                "offset": integer(minimum=0),
                "limit": integer(minimum=1),
            },
            required=["total", "offset", "limit"],
        ),
    },
    required=["data", "meta"],
)
BINARY = {"type": "string", "format": "binary"}


def _whole(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query.get(name, "")
    if raw == "":
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise invalid(name, f"must be a whole number from {low} to {high}")
    return int(raw)


@routes.get("/api/media")
@admin_route("content.read")
@operation(response=LIST_RESPONSE, query=LIST_QUERY, auth="admin")
async def list_media(request: web.Request, principal: Principal) -> web.Response:
    """Newest first; offset pages to older files"""
    offset = _whole(request, "offset", 0, 0, 999_999_999)
    limit = _whole(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    query = request.query
    filters = MediaFilters(
        search=query.get("search", "").strip() or None,
        folder=query["folder"].strip("/ ") if "folder" in query else None,
        type_prefix=query.get("type", "").strip() or None,
    )
    rows, total = await service.list_media(context(request), filters, offset, limit)
    meta = {"total": total, "offset": offset, "limit": limit}
    return json_response({"data": [media_json(r) for r in rows], "meta": meta})


@routes.post("/api/media")
@admin_route("media.manage")
@operation(status=201, body=UPLOAD_BODY, body_media=MULTIPART, auth="admin")
async def upload_media(request: web.Request, principal: Principal) -> web.Response:
    """Upload a file (multipart/form-data, streamed; MAX_UPLOAD_BYTES)"""
    if request.content_type != MULTIPART:
        raise ContentError(415, "UNSUPPORTED_MEDIA_TYPE", "send the file as multipart/form-data")
    ctx = context(request)
    try:
        reader = await request.multipart()
    except (ValueError, AssertionError, KeyError):
        raise invalid("file", "the body is not multipart/form-data with a boundary") from None
    row = await service.upload(ctx, principal, reader, request.content_length)
    return json_response(media_json(row), status=201)


@routes.get("/api/media/{id}")
@admin_route("content.read")
@operation(auth="admin")
async def get_media(request: web.Request, principal: Principal) -> web.Response:
    row = await service.get_media(context(request), request.match_info["id"])
    return json_response(media_json(row))


@routes.patch("/api/media/{id}")
@admin_route("media.manage")
@operation(body=obj(TEXT), auth="admin")
async def update_media(request: web.Request, principal: Principal) -> web.Response:
    """Change the alt text, caption or folder"""
    ctx = context(request)
    body = await read_body(request)
    row = await service.update_media(ctx, principal, request.match_info["id"], body)
    return json_response(media_json(row))


@routes.delete("/api/media/{id}")
@admin_route("media.manage")
@operation(auth="admin", errors=(409,))
async def delete_media(request: web.Request, principal: Principal) -> web.Response:
    """Delete a media no entry uses (409 MEDIA_IN_USE lists the entries that do)"""
    row = await service.delete_media(context(request), principal, request.match_info["id"])
    return json_response(media_json(row))


@routes.get("/media/files/{sha256}")
@operation(
    response=BINARY,
    response_media="*/*",
    errors=(416,),
    other={206: ("*/*", BINARY)},
)
async def media_file(request: web.Request) -> web.StreamResponse:
    """The bytes of a media (public; Range, ETag, immutable caching)"""
    ctx = context(request)
    row = await service.file_of(ctx, request.match_info["sha256"])
    return await files.serve(request, ctx.blobs, row)
