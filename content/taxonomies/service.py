"""Taxonomies and terms: the built-in categories (hierarchical) and tags (flat),
more created by editors (taxonomy.manage), and entries filed under terms.

A taxonomy's slug is its identifier in URLs and never changes, and neither
does whether it is hierarchical. A term's slug is unique within its
taxonomy. Deleting a term unfiles it from every entry and moves its children
up to its parent; deleting a taxonomy deletes its terms. The built-in two can
be renamed, never deleted (docs/content.md, "Taxonomies").
"""

from __future__ import annotations

from typing import Any

import psycopg2.errors

from common.db import Conn
from common.ids import short_id
from content.auth.principal import Principal
from content.context import Context
from content.entries.validation import SLUG_RE, slugify
from content.errors import Conflict, NotFound, Problems
from content.taxonomies import store
from content.taxonomies.store import Taxonomy, Term, TermValues
from content.writes import Write, write

MAX_TAXONOMY_SLUG = 64
MAX_TERM_SLUG = 200
MAX_NAME = 200
MAX_DESCRIPTION = 2000
# How many terms one entry may be filed under.
MAX_ENTRY_TERMS = 100
TAXONOMY_KEYS = {"slug", "name", "hierarchical"}
TERM_KEYS = {"slug", "name", "description", "parentId"}


def _slug_taken(what: str) -> Conflict:
    return Conflict(
        f"{what} with this slug exists",
        details={"fields": [{"key": "slug", "message": "is already in use"}]},
    )


def _name(body: dict[str, Any], default: str | None, p: Problems) -> str:
    name = body.get("name", default)
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        p.add("name", f"must be a non-empty string of at most {MAX_NAME} characters")
        return ""
    return name.strip()


def _slug(body: dict[str, Any], default: str, maximum: int, p: Problems) -> str:
    slug = body.get("slug")
    if slug is None:
        return default[:maximum].rstrip("-")
    if not isinstance(slug, str) or not SLUG_RE.fullmatch(slug) or len(slug) > maximum:
        p.add("slug", "must be lowercase letters and digits joined by single hyphens")
    return str(slug)


def _unknown(body: dict[str, Any], known: set[str], what: str, p: Problems) -> None:
    for key in sorted(set(body) - known):
        p.add(key, f"is not a {what} property")


async def _taxonomy(conn: Conn, slug: str, *, lock: bool = False) -> Taxonomy:
    row = await store.get_taxonomy(conn, slug, lock=lock)
    if row is None:
        raise NotFound(f"no taxonomy {slug!r}")
    return row


async def _taxonomy_changed(
    tx: Write, actor: Principal, action: str, slug: str, summary: dict[str, Any] | None = None
) -> None:
    """Activity and the change notification (delivery files entries under terms)."""
    await tx.record(actor.actor(), action, "taxonomy", slug, summary, notify={"taxonomy": slug})


async def _term_changed(tx: Write, actor: Principal, action: str, term: Term) -> None:
    await tx.record(
        actor.actor(),
        action,
        "term",
        term.id,
        {"taxonomy": term.taxonomy, "slug": term.slug, "name": term.name},
        notify={"taxonomy": term.taxonomy, "term": term.id, "slug": term.slug},
    )


# --- taxonomies --------------------------------------------------------------


async def list_taxonomies(ctx: Context) -> list[Taxonomy]:
    async with ctx.db.connection() as conn:
        return await store.list_taxonomies(conn)


async def taxonomies_with_terms(ctx: Context) -> list[tuple[Taxonomy, list[Term]]]:
    """Every taxonomy with its terms (by name), in two queries whatever their number."""
    async with ctx.db.connection() as conn:
        taxonomies = await store.list_taxonomies(conn)
        terms = await store.all_terms(conn)
    by_taxonomy: dict[str, list[Term]] = {t.id: [] for t in taxonomies}
    for term in terms:
        by_taxonomy.setdefault(term.taxonomy_id, []).append(term)
    return [(t, by_taxonomy[t.id]) for t in taxonomies]


async def get_taxonomy(ctx: Context, slug: str) -> Taxonomy:
    async with ctx.db.connection() as conn:
        return await _taxonomy(conn, slug)


async def create_taxonomy(ctx: Context, actor: Principal, body: dict[str, Any]) -> Taxonomy:
    p = Problems()
    _unknown(body, TAXONOMY_KEYS, "taxonomy", p)
    name = _name(body, None, p)
    slug = _slug(body, slugify(name), MAX_TAXONOMY_SLUG, p)
    hierarchical = body.get("hierarchical", False)
    if not isinstance(hierarchical, bool):
        p.add("hierarchical", "must be true or false")
    p.raise_if_any()
    async with write(ctx) as tx:
        try:
            row = await store.insert_taxonomy(tx.conn, short_id(), slug, name, hierarchical, tx.now)
        except psycopg2.errors.UniqueViolation:
            raise _slug_taken("a taxonomy") from None
        await _taxonomy_changed(tx, actor, "taxonomy.created", slug, {"name": name})
    return row


async def update_taxonomy(
    ctx: Context, actor: Principal, slug: str, body: dict[str, Any]
) -> Taxonomy:
    async with write(ctx) as tx:
        existing = await _taxonomy(tx.conn, slug, lock=True)
        p = Problems()
        _unknown(body, TAXONOMY_KEYS, "taxonomy", p)
        for key, value in (("slug", existing.slug), ("hierarchical", existing.hierarchical)):
            # Compared with their types: 0 == False in Python, not in JSON.
            if key in body and (type(body[key]) is not type(value) or body[key] != value):
                p.add(key, "cannot change; create a new taxonomy instead")
        name = _name(body, existing.name, p)
        p.raise_if_any()
        if name == existing.name:
            return existing
        row = await store.rename_taxonomy(tx.conn, existing.id, name, tx.now)
        await _taxonomy_changed(tx, actor, "taxonomy.updated", slug, {"name": name})
    return row


async def delete_taxonomy(ctx: Context, actor: Principal, slug: str) -> None:
    async with write(ctx) as tx:
        existing = await _taxonomy(tx.conn, slug, lock=True)
        if existing.builtin:
            raise Conflict(f"{slug} is built in and cannot be deleted", "TAXONOMY_BUILTIN")
        await store.delete_taxonomy(tx.conn, existing.id)
        await _taxonomy_changed(tx, actor, "taxonomy.deleted", slug)


# --- terms -------------------------------------------------------------------


async def list_terms(ctx: Context, slug: str) -> list[Term]:
    async with ctx.db.connection() as conn:
        taxonomy = await _taxonomy(conn, slug)
        return await store.list_terms(conn, taxonomy.id)


async def _clean_term(
    conn: Conn, taxonomy: Taxonomy, body: dict[str, Any], existing: Term | None
) -> TermValues:
    p = Problems()
    _unknown(body, TERM_KEYS, "term", p)
    name = _name(body, existing.name if existing else None, p)
    slug = _slug(body, existing.slug if existing else slugify(name), MAX_TERM_SLUG, p)
    description = body.get("description", existing.description if existing else "")
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
        p.add("description", f"must be a string of at most {MAX_DESCRIPTION} characters")
    parent_id = body.get("parentId", existing.parent_id if existing else None)
    if parent_id is not None:
        if not taxonomy.hierarchical:
            p.add("parentId", f"{taxonomy.slug} is flat; its terms have no parent")
        elif not isinstance(parent_id, str) or not await store.get_term(
            conn, taxonomy.id, parent_id
        ):
            p.add("parentId", f"must be the id of a term of {taxonomy.slug}")
        elif existing is not None and existing.id in await store.ancestors(conn, parent_id):
            p.add("parentId", "cannot be the term itself or one of its descendants")
    p.raise_if_any()
    return TermValues(
        slug=slug, name=name, description=str(description).strip(), parent_id=parent_id
    )


async def create_term(ctx: Context, actor: Principal, slug: str, body: dict[str, Any]) -> Term:
    async with write(ctx) as tx:
        taxonomy = await _taxonomy(tx.conn, slug, lock=True)
        values = await _clean_term(tx.conn, taxonomy, body, None)
        term_id = short_id()
        try:
            await store.insert_term(tx.conn, term_id, taxonomy.id, values, tx.now)
        except psycopg2.errors.UniqueViolation:
            raise _slug_taken(f"a term of {slug}") from None
        term = await store.get_term(tx.conn, taxonomy.id, term_id)
        assert term is not None
        await _term_changed(tx, actor, "term.created", term)
    return term


async def _locked_term(tx: Write, slug: str, term_id: str) -> tuple[Taxonomy, Term]:
    taxonomy = await _taxonomy(tx.conn, slug, lock=True)
    term = await store.get_term(tx.conn, taxonomy.id, term_id, lock=True)
    if term is None:
        raise NotFound(f"no term {term_id!r} in {slug}")
    return taxonomy, term


async def update_term(
    ctx: Context, actor: Principal, slug: str, term_id: str, body: dict[str, Any]
) -> Term:
    async with write(ctx) as tx:
        taxonomy, existing = await _locked_term(tx, slug, term_id)
        values = await _clean_term(tx.conn, taxonomy, body, existing)
        try:
            await store.update_term(tx.conn, term_id, values, tx.now)
        except psycopg2.errors.UniqueViolation:
            raise _slug_taken(f"a term of {slug}") from None
        term = await store.get_term(tx.conn, taxonomy.id, term_id)
        assert term is not None
        await _term_changed(tx, actor, "term.updated", term)
    return term


async def delete_term(ctx: Context, actor: Principal, slug: str, term_id: str) -> None:
    async with write(ctx) as tx:
        _, term = await _locked_term(tx, slug, term_id)
        await store.delete_term(tx.conn, term)
        await _term_changed(tx, actor, "term.deleted", term)


# --- entries filed under terms -----------------------------------------------


async def check_entry_terms(conn: Conn, value: Any, p: Problems) -> list[str]:
    """The ``terms`` of an entry body: distinct ids of existing terms, any taxonomy."""
    if not isinstance(value, list) or len(value) > MAX_ENTRY_TERMS:
        p.add("terms", f"must be a list of at most {MAX_ENTRY_TERMS} term ids")
        return []
    ids: list[str] = []
    for i, term_id in enumerate(value):
        if not isinstance(term_id, str) or not term_id:
            p.add(f"terms.{i}", "must be a term id")
        elif term_id in ids:
            p.add(f"terms.{i}", "is listed twice")
        else:
            ids.append(term_id)
    known = await store.terms_by_id(conn, ids)
    for i, term_id in enumerate(value):
        if isinstance(term_id, str) and term_id and term_id not in known:
            p.add(f"terms.{i}", "is not the id of a term")
    return ids
