"""SQL for content.taxonomies, content.terms and content.entry_terms."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from common.db import Conn, execute, fetch_all, fetch_one
from common.records import Record

_TAXONOMY = "id, slug, name, hierarchical, builtin, created_at, updated_at"
_TERM = (
    "tm.id, tm.taxonomy_id, tx.slug AS taxonomy, tm.slug, tm.name, tm.description,"
    " tm.parent_id, tm.created_at, tm.updated_at"
)
_TERM_FROM = "content.terms tm JOIN content.taxonomies tx ON tx.id = tm.taxonomy_id"


@dataclass(frozen=True)
class Taxonomy(Record):
    """A row of content.taxonomies."""

    id: str
    slug: str
    name: str
    hierarchical: bool
    builtin: bool
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class Term(Record):
    """A row of content.terms with its taxonomy's slug."""

    id: str
    taxonomy_id: str
    taxonomy: str
    slug: str
    name: str
    description: str
    parent_id: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class TermValues:
    """What a term sets: checked by taxonomies/service.py."""

    slug: str
    name: str
    description: str
    parent_id: str | None


# --- taxonomies --------------------------------------------------------------


async def list_taxonomies(conn: Conn) -> list[Taxonomy]:
    rows = await fetch_all(
        conn, f"SELECT {_TAXONOMY} FROM content.taxonomies ORDER BY builtin DESC, slug"
    )
    return [Taxonomy.from_row(r) for r in rows]


async def get_taxonomy(conn: Conn, slug: str, *, lock: bool = False) -> Taxonomy | None:
    suffix = " FOR UPDATE" if lock else ""
    row = await fetch_one(
        conn, f"SELECT {_TAXONOMY} FROM content.taxonomies WHERE slug = %s{suffix}", (slug,)
    )
    return Taxonomy.from_optional(row)


async def insert_taxonomy(
    conn: Conn, taxonomy_id: str, slug: str, name: str, hierarchical: bool, now: datetime
) -> Taxonomy:
    row = await fetch_one(
        conn,
        f"INSERT INTO content.taxonomies (id, slug, name, hierarchical, created_at, updated_at)"
        f" VALUES (%s, %s, %s, %s, %s, %s) RETURNING {_TAXONOMY}",
        (taxonomy_id, slug, name, hierarchical, now, now),
    )
    assert row is not None
    return Taxonomy.from_row(row)


async def rename_taxonomy(conn: Conn, taxonomy_id: str, name: str, now: datetime) -> Taxonomy:
    row = await fetch_one(
        conn,
        f"UPDATE content.taxonomies SET name = %s, updated_at = %s WHERE id = %s"
        f" RETURNING {_TAXONOMY}",
        (name, now, taxonomy_id),
    )
    assert row is not None
    return Taxonomy.from_row(row)


async def delete_taxonomy(conn: Conn, taxonomy_id: str) -> None:
    """Its terms and their attachments to entries go with it (ON DELETE CASCADE)."""
    await execute(conn, "DELETE FROM content.taxonomies WHERE id = %s", (taxonomy_id,))


# --- terms -------------------------------------------------------------------


async def list_terms(conn: Conn, taxonomy_id: str) -> list[Term]:
    rows = await fetch_all(
        conn,
        f"SELECT {_TERM} FROM {_TERM_FROM} WHERE tm.taxonomy_id = %s ORDER BY tm.name, tm.id",
        (taxonomy_id,),
    )
    return [Term.from_row(r) for r in rows]


async def all_terms(conn: Conn) -> list[Term]:
    """Every term of every taxonomy, by name: the entry editor's picker in one query."""
    rows = await fetch_all(conn, f"SELECT {_TERM} FROM {_TERM_FROM} ORDER BY tm.name, tm.id")
    return [Term.from_row(r) for r in rows]


async def get_term(
    conn: Conn, taxonomy_id: str, term_id: str, *, lock: bool = False
) -> Term | None:
    suffix = " FOR UPDATE OF tm" if lock else ""
    row = await fetch_one(
        conn,
        f"SELECT {_TERM} FROM {_TERM_FROM} WHERE tm.taxonomy_id = %s AND tm.id = %s{suffix}",
        (taxonomy_id, term_id),
    )
    return Term.from_optional(row)


async def insert_term(
    conn: Conn, term_id: str, taxonomy_id: str, values: TermValues, now: datetime
) -> None:
    await execute(
        conn,
        "INSERT INTO content.terms (id, taxonomy_id, slug, name, description, parent_id,"
        " created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
        (
            term_id,
            taxonomy_id,
            values.slug,
            values.name,
            values.description,
            values.parent_id,
            now,
            now,
        ),
    )


async def update_term(conn: Conn, term_id: str, values: TermValues, now: datetime) -> None:
    await execute(
        conn,
        "UPDATE content.terms SET slug = %s, name = %s, description = %s, parent_id = %s,"
        " updated_at = %s WHERE id = %s",
        (values.slug, values.name, values.description, values.parent_id, now, term_id),
    )


async def ancestors(conn: Conn, term_id: str) -> list[str]:
    """The term and its parents up to the root (a cycle check for a new parent)."""
    rows = await fetch_all(
        conn,
        "WITH RECURSIVE up(id, parent_id, depth) AS ("
        " SELECT id, parent_id, 0 FROM content.terms WHERE id = %s"
        " UNION ALL SELECT t.id, t.parent_id, up.depth + 1 FROM content.terms t"
        " JOIN up ON t.id = up.parent_id WHERE up.depth < 100)"
        " SELECT id FROM up ORDER BY depth",
        (term_id,),
    )
    return [row["id"] for row in rows]


async def delete_term(conn: Conn, term: Term) -> None:
    """Children move up to the deleted term's parent (as WordPress does)."""
    await execute(
        conn,
        "UPDATE content.terms SET parent_id = %s WHERE parent_id = %s",
        (term.parent_id, term.id),
    )
    await execute(conn, "DELETE FROM content.terms WHERE id = %s", (term.id,))


# --- entries filed under terms -----------------------------------------------


async def terms_by_id(conn: Conn, term_ids: list[str]) -> dict[str, Term]:
    rows = await fetch_all(
        conn, f"SELECT {_TERM} FROM {_TERM_FROM} WHERE tm.id = ANY(%s)", (term_ids,)
    )
    return {row["id"]: Term.from_row(row) for row in rows}


async def entry_terms(conn: Conn, entry_ids: list[str]) -> dict[str, list[Term]]:
    """Entry id -> the terms it is filed under, in the order they were given."""
    rows = await fetch_all(
        conn,
        f"SELECT et.entry_id, {_TERM} FROM content.entry_terms et"
        f" JOIN {_TERM_FROM} ON tm.id = et.term_id"
        " WHERE et.entry_id = ANY(%s) ORDER BY et.entry_id, et.position",
        (entry_ids,),
    )
    out: dict[str, list[Term]] = {entry_id: [] for entry_id in entry_ids}
    for row in rows:
        out[row["entry_id"]].append(Term.from_row(row))
    return out


async def set_entry_terms(conn: Conn, entry_id: str, term_ids: list[str]) -> bool:
    """File the entry under exactly these terms; False when that changes nothing."""
    rows = await fetch_all(
        conn,
        "SELECT term_id FROM content.entry_terms WHERE entry_id = %s ORDER BY position",
        (entry_id,),
    )
    if [row["term_id"] for row in rows] == term_ids:
        return False
    await execute(conn, "DELETE FROM content.entry_terms WHERE entry_id = %s", (entry_id,))
    await execute(
        conn,
        "INSERT INTO content.entry_terms (entry_id, term_id, position)"
        " SELECT %s, u.term_id, u.n FROM unnest(%s::text[]) WITH ORDINALITY AS u(term_id, n)",
        (entry_id, term_ids),
    )
    return True
