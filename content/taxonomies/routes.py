"""Taxonomies and their terms under /api/taxonomies (read: content.read; change: taxonomy.manage)."""

from __future__ import annotations

from aiohttp import web

from common.openapi import Schema, boolean, obj, operation, string
from common.web import json_response
from content.auth.credentials import admin_route
from content.auth.principal import Principal
from content.context import context
from content.entries.validation import SLUG_RE
from content.errors import invalid
from content.http import read_body
from content.taxonomies import service
from content.taxonomies.serializers import taxonomy_json, term_json

routes = web.RouteTableDef()

_NAME = string(min_length=1, max_length=service.MAX_NAME)


def taxonomy_body(*, creating: bool) -> Schema:
    """content.taxonomies.service.create_taxonomy / update_taxonomy."""
    return obj(
        {
            "slug": string(
                pattern=SLUG_RE.pattern, max_length=service.MAX_TAXONOMY_SLUG, nullable=True
            ),
            "name": _NAME,
            "hierarchical": boolean(),
        },
        required=["name"] if creating else [],
    )


def term_body(*, creating: bool) -> Schema:
    """content.taxonomies.service._clean_term."""
    return obj(
        {
            "slug": string(
                pattern=SLUG_RE.pattern, max_length=service.MAX_TERM_SLUG, nullable=True
            ),
            "name": _NAME,
            "description": string(max_length=service.MAX_DESCRIPTION),
            "parentId": string(nullable=True),
        },
        required=["name"] if creating else [],
    )


@routes.get("/api/taxonomies")
@admin_route("content.read")
@operation(auth="admin", query={"include": string(enum=["terms", ""])})
async def list_taxonomies(request: web.Request, principal: Principal) -> web.Response:
    """Every taxonomy; ``?include=terms`` adds each one's terms (the entry editor's picker)."""
    include = request.query.get("include") or ""
    if include not in ("", "terms"):
        raise invalid("include", "must be terms")
    if include:
        found = await service.taxonomies_with_terms(context(request))
        data = [{**taxonomy_json(t), "terms": [term_json(m) for m in terms]} for t, terms in found]
        return json_response({"data": data})
    rows = await service.list_taxonomies(context(request))
    return json_response({"data": [taxonomy_json(r) for r in rows]})


@routes.post("/api/taxonomies")
@admin_route("taxonomy.manage")
@operation(status=201, body=taxonomy_body(creating=True), auth="admin", errors=(409,))
async def create_taxonomy(request: web.Request, principal: Principal) -> web.Response:
    row = await service.create_taxonomy(context(request), principal, await read_body(request))
    return json_response(taxonomy_json(row), status=201)


@routes.get("/api/taxonomies/{slug}")
@admin_route("content.read")
@operation(auth="admin")
async def get_taxonomy(request: web.Request, principal: Principal) -> web.Response:
    row = await service.get_taxonomy(context(request), request.match_info["slug"])
    return json_response(taxonomy_json(row))


@routes.patch("/api/taxonomies/{slug}")
@admin_route("taxonomy.manage")
@operation(body=taxonomy_body(creating=False), auth="admin")
async def update_taxonomy(request: web.Request, principal: Principal) -> web.Response:
    body = await read_body(request)
    row = await service.update_taxonomy(
        context(request), principal, request.match_info["slug"], body
    )
    return json_response(taxonomy_json(row))


@routes.delete("/api/taxonomies/{slug}")
@admin_route("taxonomy.manage")
@operation(status=204, auth="admin", errors=(409,))
async def delete_taxonomy(request: web.Request, principal: Principal) -> web.Response:
    await service.delete_taxonomy(context(request), principal, request.match_info["slug"])
    return web.Response(status=204)


@routes.get("/api/taxonomies/{slug}/terms")
@admin_route("content.read")
@operation(auth="admin")
async def list_terms(request: web.Request, principal: Principal) -> web.Response:
    rows = await service.list_terms(context(request), request.match_info["slug"])
    return json_response({"data": [term_json(r) for r in rows]})


@routes.post("/api/taxonomies/{slug}/terms")
@admin_route("taxonomy.manage")
@operation(status=201, body=term_body(creating=True), auth="admin", errors=(409,))
async def create_term(request: web.Request, principal: Principal) -> web.Response:
    body = await read_body(request)
    row = await service.create_term(context(request), principal, request.match_info["slug"], body)
    return json_response(term_json(row), status=201)


@routes.patch("/api/taxonomies/{slug}/terms/{id}")
@admin_route("taxonomy.manage")
@operation(body=term_body(creating=False), auth="admin", errors=(409,))
async def update_term(request: web.Request, principal: Principal) -> web.Response:
    body = await read_body(request)
    match = request.match_info
    row = await service.update_term(context(request), principal, match["slug"], match["id"], body)
    return json_response(term_json(row))


@routes.delete("/api/taxonomies/{slug}/terms/{id}")
@admin_route("taxonomy.manage")
@operation(status=204, auth="admin")
async def delete_term(request: web.Request, principal: Principal) -> web.Response:
    match = request.match_info
    await service.delete_term(context(request), principal, match["slug"], match["id"])
    return web.Response(status=204)
