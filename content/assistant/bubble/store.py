"""The bubble's retrieval: PostgreSQL full text over published, live entries in scope.

The document of an entry is its title (weight A) and the string values of its
data (weight B), under the 'simple' configuration (no stemming, every locale
alike), indexed by entries_assistant_search (0070_assistant.sql) with the same
expression and predicate, so the planner uses it. A question matches an entry
sharing any of its words (an OR of its lexemes, not plainto_tsquery's AND:
visitors ask in sentences); ts_rank_cd orders them. Drafts, unpublished,
trashed and out-of-scope types can never match: the predicate says so.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from common.db import Conn, fetch_all

DOCUMENT = (
    "(setweight(to_tsvector('simple', e.title), 'A')"
    " || setweight(jsonb_to_tsvector('simple', e.data, '[\"string\"]'), 'B'))"
)


async def search(
    conn: Conn, question: str, scopes: Collection[str], limit: int
) -> list[dict[str, Any]]:
    everything = "*" in scopes
    return await fetch_all(
        conn,
        "WITH q AS (SELECT to_tsquery('simple', array_to_string(ARRAY("
        " SELECT quote_literal(l) FROM unnest(tsvector_to_array(to_tsvector('simple', %s))) l"
        " LIMIT 32), ' | ')) AS query)"
        " SELECT e.id, e.slug, e.title, e.data, e.locale, t.name AS type, t.preview_url,"
        f" ts_rank_cd({DOCUMENT}, q.query) AS rank"
        " FROM content.entries e JOIN content.content_types t ON t.id = e.type_id, q"
        " WHERE e.deleted_at IS NULL AND e.status = 'published'"
        " AND (%s OR t.name = ANY(%s))"
        f" AND {DOCUMENT} @@ q.query"
        " ORDER BY rank DESC, e.published_at DESC NULLS LAST, e.id LIMIT %s",
        (question, everything, list(scopes), limit),
    )
