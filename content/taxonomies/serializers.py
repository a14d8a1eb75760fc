"""The JSON shapes of a taxonomy and a term."""

from __future__ import annotations

from typing import Any

from content.taxonomies.store import Taxonomy, Term


def taxonomy_json(taxonomy: Taxonomy) -> dict[str, Any]:
    return {
        "slug": taxonomy.slug,
        "name": taxonomy.name,
        "hierarchical": taxonomy.hierarchical,
        "builtin": taxonomy.builtin,
        "createdAt": taxonomy.created_at,
        "updatedAt": taxonomy.updated_at,
    }


def term_json(term: Term) -> dict[str, Any]:
    return {
        "id": term.id,
        "taxonomy": term.taxonomy,
        "slug": term.slug,
        "name": term.name,
        "description": term.description,
        "parentId": term.parent_id,
        "createdAt": term.created_at,
        "updatedAt": term.updated_at,
    }


def filed_json(term: Term) -> dict[str, Any]:
    """A term as an entry shows what it is filed under."""
    return {"id": term.id, "taxonomy": term.taxonomy, "slug": term.slug, "name": term.name}
