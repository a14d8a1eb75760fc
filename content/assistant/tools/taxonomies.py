"""Taxonomies and terms: GET /api/taxonomies with each one's terms
(GET /api/taxonomies/:slug/terms), and proposals through create_taxonomy and
create_term."""

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
    jsonable,
    params,
    propose,
    read,
)
from content.auth.principal import Principal
from content.context import Context
from content.entries.validation import SLUG_RE, slugify
from content.errors import ContentError
from content.taxonomies import service
from content.taxonomies.serializers import taxonomy_json, term_json

_NAME = string(min_length=1, max_length=service.MAX_NAME)


async def list_taxonomies(ctx: Context, principal: Principal, args: Args) -> Json:
    """Each taxonomy as GET /api/taxonomies shows it, with its terms (few: one query each)."""
    out = []
    for row in await service.list_taxonomies(ctx):
        terms = await service.list_terms(ctx, row.slug)
        out.append(
            {**jsonable(taxonomy_json(row)), "terms": [jsonable(term_json(t)) for t in terms]}
        )
    return {"data": out}


async def _taxonomy(ctx: Context, slug: str) -> Json | None:
    try:
        return jsonable(taxonomy_json(await service.get_taxonomy(ctx, slug)))
    except ContentError:
        return None


async def draft_taxonomy(ctx: Context, principal: Principal, args: Args) -> Draft:
    slug = args.get("slug") or slugify(args["name"])
    if await _taxonomy(ctx, slug) is not None:
        raise Refused(f"a taxonomy with the slug {slug!r} exists")
    after = {
        "slug": slug,
        "name": args["name"].strip(),
        "hierarchical": args.get("hierarchical", False),
    }
    return Draft(Target("taxonomy", slug), changes(None, after), ("taxonomy.manage",))


async def apply_taxonomy(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    row = await service.create_taxonomy(ctx, principal, dict(args))
    return Applied(jsonable(taxonomy_json(row)))


async def draft_term(ctx: Context, principal: Principal, args: Args) -> Draft:
    taxonomy = await _taxonomy(ctx, args["taxonomy"])
    if taxonomy is None:
        raise Refused(f"no taxonomy {args['taxonomy']!r}; list_taxonomies names them")
    terms = await service.list_terms(ctx, args["taxonomy"])
    slug = args.get("slug") or slugify(args["name"])
    if any(t.slug == slug for t in terms):
        raise Refused(f"{args['taxonomy']} already has a term with the slug {slug!r}")
    parent = args.get("parentId")
    if parent is not None and not taxonomy["hierarchical"]:
        raise Refused(f"{args['taxonomy']} is flat; its terms have no parent")
    if parent is not None and not any(t.id == parent for t in terms):
        raise Refused(f"parentId must be the id of a term of {args['taxonomy']}")
    after = {
        "taxonomy": args["taxonomy"],
        "slug": slug,
        "name": args["name"].strip(),
        "description": args.get("description", ""),
        "parentId": parent,
    }
    return Draft(Target("term", None), changes(None, after), ("taxonomy.manage",))


async def apply_term(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    body = {k: v for k, v in args.items() if k != "taxonomy"}
    row = await service.create_term(ctx, principal, args["taxonomy"], body)
    return Applied(jsonable(term_json(row)))


TOOLS = (
    read(
        "list_taxonomies",
        "content.read",
        "The taxonomies (categories, tags and others) with their terms and term ids.",
        params({}),
        list_taxonomies,
    ),
    propose(
        "propose_taxonomy_create",
        "taxonomy.manage",
        "Propose a new taxonomy.",
        params(
            {
                "name": _NAME,
                "slug": string(pattern=SLUG_RE.pattern, max_length=service.MAX_TAXONOMY_SLUG),
                "hierarchical": boolean(),
            },
            required=("name",),
        ),
        draft=draft_taxonomy,
        apply=apply_taxonomy,
    ),
    propose(
        "propose_term_create",
        "taxonomy.manage",
        "Propose a new term in a taxonomy.",
        params(
            {
                "taxonomy": string(min_length=1, description="the taxonomy's slug"),
                "name": _NAME,
                "slug": string(pattern=SLUG_RE.pattern, max_length=service.MAX_TERM_SLUG),
                "description": string(max_length=service.MAX_DESCRIPTION),
                "parentId": string(nullable=True),
            },
            required=("taxonomy", "name"),
        ),
        draft=draft_term,
        apply=apply_term,
    ),
)
