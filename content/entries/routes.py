"""Entries, revisions and the trash under /api (docs/content.md, "Entries")."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.openapi import Schema, obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import Context, context
from content.entries import service, store
from content.entries.serializers import entry_json, revision_json
from content.entries.store import SORTS, Entry, EntryFilters
from content.entries.validation import LOCALE_RE, MAX_SLUG, MAX_TITLE, SLUG_RE
from content.errors import NotFound, invalid
from content.http import page_body, paging, read_body
from content.openapi import PAGE, PAGING
from content.types import store as type_store
from content.types.fields import FieldDefinition

routes = web.RouteTableDef()

# OpenAPI declarations (common/openapi.py), from the validators' own tables.
LIST_QUERY = {
    **PAGING,
    "type": string(),
    # Empty values read as absent.
    "status": string(enum=[*service.STATUSES, ""]),
    "author": string(),
    "locale": string(),
    "search": string(),
    # _sort strips every leading "-" (descending).
    "sort": string(pattern=f"^-*({'|'.join(SORTS)})$"),
}


def entry_body(*, creating: bool) -> Schema:
    """A new entry names its type and title; an update may not change the type."""
    members = {
        "title": string(min_length=1, max_length=MAX_TITLE),
        "slug": string(pattern=SLUG_RE.pattern, max_length=MAX_SLUG, nullable=True),
        "locale": string(pattern=LOCALE_RE.pattern),
        "data": {"type": "object"},
        "status": string(enum=service.STATUSES),
        "publishAt": string(fmt="date-time", nullable=True),
    }
    if not creating:
        return obj(members)
    return obj({"type": string(min_length=1), **members}, required=["type", "title"])


async def _fields_by_type(ctx: Context, rows: list[Entry]) -> dict[str, list[FieldDefinition]]:
    """Field definitions for the types of a page of entries, in one query."""
    if not rows:
        return {}
    async with ctx.db.connection() as conn:
        types = await type_store.list_types(conn)
    return {t.id: t.fields for t in types}


async def _one(ctx: Context, row: Entry) -> dict[str, Any]:
    return entry_json(row, await service.type_fields(ctx, row.type_id))


def _sort(request: web.Request) -> tuple[str, bool]:
    raw = request.query.get("sort", "-updatedAt")
    descending = raw.startswith("-")
    column = raw.lstrip("-")
    if column not in SORTS:
        raise invalid("sort", f"must be one of {', '.join(SORTS)}, optionally prefixed with -")
    return column, descending


async def _list(request: web.Request, principal: Principal, *, trashed: bool) -> web.Response:
    ctx = context(request)
    page = paging(request)
    query = request.query
    author = query.get("author") or None
    filters = EntryFilters(
        type=query.get("type") or None,
        status=query.get("status") or None,
        author=principal.user.id if author == "me" else author,
        locale=query.get("locale") or None,
        search=(query.get("search") or "").strip() or None,
    )
    if filters.status is not None and filters.status not in service.STATUSES:
        raise invalid("status", f"must be one of {', '.join(service.STATUSES)}")
    async with ctx.db.connection() as conn:
        rows, total = await store.list_entries(
            conn,
            trashed=trashed,
            filters=filters,
            sort=_sort(request),
            limit=page.limit,
            offset=page.offset,
        )
    fields = await _fields_by_type(ctx, rows)
    return json_response(
        page_body([entry_json(r, fields.get(r.type_id, [])) for r in rows], page, total)
    )


@routes.get("/api/entries")
@admin_route("content.read")
@operation(response=PAGE, query=LIST_QUERY, auth="admin")
async def list_entries(request: web.Request, principal: Principal) -> web.Response:
    return await _list(request, principal, trashed=False)


@routes.post("/api/entries")
@admin_route("content.write")
@operation(status=201, body=entry_body(creating=True), auth="admin", errors=(409,))
async def create_entry(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    row = await service.create_entry(ctx, principal, await read_body(request))
    return json_response(await _one(ctx, row), status=201)


@routes.get("/api/entries/{id}")
@admin_route("content.read")
@operation(auth="admin")
async def get_entry(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    return json_response(await _one(ctx, await service.get_entry(ctx, request.match_info["id"])))


@routes.patch("/api/entries/{id}")
@admin_route("content.write")
@operation(body=entry_body(creating=False), auth="admin", errors=(409,))
async def update_entry(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    body = await read_body(request)
    row = await service.update_entry(ctx, principal, request.match_info["id"], body)
    return json_response(await _one(ctx, row))


@routes.delete("/api/entries/{id}")
@admin_route("content.write")
@operation(auth="admin", errors=(409,))
async def trash_entry(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    row = await service.trash_entry(ctx, principal, request.match_info["id"])
    return json_response(await _one(ctx, row))


@routes.get("/api/entries/{id}/revisions")
@admin_route("content.read")
@operation(response=PAGE, query=PAGING, auth="admin")
async def list_revisions(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    page = paging(request)
    entry = await service.get_entry(ctx, request.match_info["id"], trashed=None)
    async with ctx.db.connection() as conn:
        rows, total = await store.list_revisions(
            conn, entry.id, limit=page.limit, offset=page.offset
        )
    return json_response(page_body([revision_json(r) for r in rows], page, total))


def _number(request: web.Request) -> int:
    try:
        return int(request.match_info["number"])
    except ValueError:
        raise NotFound("no such revision") from None


@routes.get("/api/entries/{id}/revisions/{number}")
@admin_route("content.read")
@operation(auth="admin")
async def get_revision(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    async with ctx.db.connection() as conn:
        row = await store.get_revision(conn, request.match_info["id"], _number(request))
    if row is None:
        raise NotFound("no such revision")
    return json_response(revision_json(row))


@routes.post("/api/entries/{id}/revisions/{number}/restore")
@admin_route("content.write")
@operation(auth="admin", errors=(409,))
async def restore_revision(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    row = await service.restore_revision(ctx, principal, request.match_info["id"], _number(request))
    return json_response(await _one(ctx, row))


@routes.get("/api/trash")
@admin_route("content.write")
@operation(response=PAGE, query=LIST_QUERY, auth="admin")
async def list_trash(request: web.Request, principal: Principal) -> web.Response:
    return await _list(request, principal, trashed=True)


@routes.post("/api/trash/{id}/restore")
@admin_route("content.write")
@operation(auth="admin", errors=(409,))
async def restore_entry(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    row = await service.restore_entry(ctx, principal, request.match_info["id"])
    return json_response(await _one(ctx, row))


@routes.delete("/api/trash/{id}")
@admin_route("content.publish")
@operation(status=204, auth="admin", errors=(409,))
async def purge_entry(request: web.Request, principal: Principal) -> web.Response:
    await service.purge_entry(context(request), principal, request.match_info["id"])
    return web.Response(status=204)
