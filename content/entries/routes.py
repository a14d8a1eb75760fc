"""Entries, revisions and the trash under /api (docs/content.md, "Entries")."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.openapi import Schema, array, obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.entries import service
from content.entries.serializers import entry_json, revision_json
from content.entries.store import SORTS, EntryFilters
from content.entries.validation import LOCALE_RE, MAX_SLUG, MAX_TITLE, SLUG_RE
from content.errors import NotFound, invalid
from content.http import page_body, paging, read_body
from content.openapi import PAGE, PAGING
from content.taxonomies.service import MAX_ENTRY_TERMS

routes = web.RouteTableDef()

# OpenAPI declarations (common/openapi.py), from the validators' own tables.
LIST_QUERY = {
    **PAGING,
    "type": string(),
    # Empty values read as absent.
    "status": string(enum=[*service.LIST_STATUSES, ""]),
    "author": string(),
    "locale": string(),
    "search": string(),
    "term": string(description="a term slug, or taxonomy:slug"),
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
        "terms": array(string(min_length=1), max_items=MAX_ENTRY_TERMS),
    }
    if not creating:
        return obj(members)
    return obj({"type": string(min_length=1), **members}, required=["type", "title"])


def _json(view: service.EntryView) -> dict[str, Any]:
    return entry_json(view.entry, view.fields, view.terms)


def _sort(request: web.Request) -> tuple[str, bool]:
    raw = request.query.get("sort", "-updatedAt")
    descending = raw.startswith("-")
    column = raw.lstrip("-")
    if column not in SORTS:
        raise invalid("sort", f"must be one of {', '.join(SORTS)}, optionally prefixed with -")
    return column, descending


async def _list(request: web.Request, principal: Principal, *, trashed: bool) -> web.Response:
    page = paging(request)
    query = request.query
    author = query.get("author") or None
    filters = EntryFilters(
        type=query.get("type") or None,
        status=query.get("status") or None,
        author=principal.user.id if author == "me" else author,
        locale=query.get("locale") or None,
        search=(query.get("search") or "").strip() or None,
        term=query.get("term") or None,
    )
    if filters.status is not None and filters.status not in service.LIST_STATUSES:
        raise invalid("status", f"must be one of {', '.join(service.LIST_STATUSES)}")
    views, total = await service.list_entries(
        context(request), trashed=trashed, filters=filters, sort=_sort(request), paging=page
    )
    return json_response(page_body([_json(v) for v in views], page, total))


@routes.get("/api/entries")
@admin_route("content.read")
@operation(response=PAGE, query=LIST_QUERY, auth="admin")
async def list_entries(request: web.Request, principal: Principal) -> web.Response:
    return await _list(request, principal, trashed=False)


@routes.post("/api/entries")
@admin_route("content.write")
@operation(status=201, body=entry_body(creating=True), auth="admin", errors=(409,))
async def create_entry(request: web.Request, principal: Principal) -> web.Response:
    view = await service.create_entry(context(request), principal, await read_body(request))
    return json_response(_json(view), status=201)


@routes.get("/api/entries/{id}")
@admin_route("content.read")
@operation(auth="admin")
async def get_entry(request: web.Request, principal: Principal) -> web.Response:
    return json_response(
        _json(await service.view_entry(context(request), request.match_info["id"]))
    )


@routes.patch("/api/entries/{id}")
@admin_route("content.write")
@operation(body=entry_body(creating=False), auth="admin", errors=(409,))
async def update_entry(request: web.Request, principal: Principal) -> web.Response:
    body = await read_body(request)
    view = await service.update_entry(context(request), principal, request.match_info["id"], body)
    return json_response(_json(view))


@routes.delete("/api/entries/{id}")
@admin_route("content.write")
@operation(auth="admin", errors=(409,))
async def trash_entry(request: web.Request, principal: Principal) -> web.Response:
    view = await service.trash_entry(context(request), principal, request.match_info["id"])
    return json_response(_json(view))


@routes.get("/api/entries/{id}/revisions")
@admin_route("content.read")
@operation(response=PAGE, query=PAGING, auth="admin")
async def list_revisions(request: web.Request, principal: Principal) -> web.Response:
    page = paging(request)
    rows, total = await service.list_revisions(context(request), request.match_info["id"], page)
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
    row = await service.get_revision(context(request), request.match_info["id"], _number(request))
    return json_response(revision_json(row))


@routes.post("/api/entries/{id}/revisions/{number}/restore")
@admin_route("content.write")
@operation(auth="admin", errors=(409,))
async def restore_revision(request: web.Request, principal: Principal) -> web.Response:
    ctx = context(request)
    view = await service.restore_revision(
        ctx, principal, request.match_info["id"], _number(request)
    )
    return json_response(_json(view))


@routes.get("/api/trash")
@admin_route("content.write")
@operation(response=PAGE, query=LIST_QUERY, auth="admin")
async def list_trash(request: web.Request, principal: Principal) -> web.Response:
    return await _list(request, principal, trashed=True)


@routes.post("/api/trash/{id}/restore")
@admin_route("content.write")
@operation(auth="admin", errors=(409,))
async def restore_entry(request: web.Request, principal: Principal) -> web.Response:
    view = await service.restore_entry(context(request), principal, request.match_info["id"])
    return json_response(_json(view))


@routes.delete("/api/trash/{id}")
@admin_route("content.publish")
@operation(status=204, auth="admin", errors=(409,))
async def purge_entry(request: web.Request, principal: Principal) -> web.Response:
    await service.purge_entry(context(request), principal, request.match_info["id"])
    return web.Response(status=204)
