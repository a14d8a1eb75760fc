"""The JSON shapes of an entry and a revision."""

from __future__ import annotations

from typing import Any

from content.entries.store import Entry, Revision
from content.taxonomies.serializers import filed_json
from content.taxonomies.store import Term
from content.types.fields import FieldDefinition, empty_value

LAYOUT_KEY = "__layout"


def visible_data(data: dict[str, Any], fields: list[FieldDefinition]) -> dict[str, Any]:
    """Stored data shaped by the type's current fields (and the layout).

    Values of removed fields stay stored but are not shown; a field added
    since the entry was saved shows its empty value. See
    content/types/service.py for what type changes do to entries.
    """
    shaped = {d["key"]: data[d["key"]] if d["key"] in data else empty_value(d) for d in fields}
    if LAYOUT_KEY in data:
        shaped[LAYOUT_KEY] = data[LAYOUT_KEY]
    return shaped


def entry_json(
    entry: Entry, fields: list[FieldDefinition], terms: list[Term] | None = None
) -> dict[str, Any]:
    return {
        "id": entry.id,
        "type": entry.type_name,
        "slug": entry.slug,
        "title": entry.title,
        "data": visible_data(entry.data, fields),
        "status": entry.status,
        "locale": entry.locale,
        "authorId": entry.author_id,
        "publishAt": entry.publish_at,
        "publishedAt": entry.published_at,
        "createdAt": entry.created_at,
        "updatedAt": entry.updated_at,
        "deletedAt": entry.deleted_at,
        "revision": entry.revision,
        "terms": [filed_json(t) for t in terms or []],
    }


def revision_json(revision: Revision) -> dict[str, Any]:
    return {
        "number": revision.number,
        "title": revision.title,
        "slug": revision.slug,
        "locale": revision.locale,
        "status": revision.status,
        "data": revision.data,
        "actor": revision.actor,
        "note": revision.note,
        "createdAt": revision.created_at,
    }
