"""The JSON shapes of an entry and a revision."""

from __future__ import annotations

from typing import Any

from content.types.fields import empty_value

LAYOUT_KEY = "__layout"


def visible_data(data: dict[str, Any], fields: list[dict[str, Any]]) -> dict[str, Any]:
    """Stored data shaped by the type's current fields (and the layout).

    Values of removed fields stay stored but are not shown; a field added
    since the entry was saved shows its empty value. See
    content/types/service.py for what type changes do to entries.
    """
    shaped = {d["key"]: data[d["key"]] if d["key"] in data else empty_value(d) for d in fields}
    if LAYOUT_KEY in data:
        shaped[LAYOUT_KEY] = data[LAYOUT_KEY]
    return shaped


def entry_json(row: dict[str, Any], fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "type": row["type_name"],
        "slug": row["slug"],
        "title": row["title"],
        "data": visible_data(row["data"], fields),
        "status": row["status"],
        "locale": row["locale"],
        "authorId": row["author_id"],
        "publishAt": row["publish_at"],
        "publishedAt": row["published_at"],
        "createdAt": row["created_at"],
        "updatedAt": row["updated_at"],
        "deletedAt": row["deleted_at"],
        "revision": row["revision"],
    }


def revision_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "number": row["number"],
        "title": row["title"],
        "slug": row["slug"],
        "locale": row["locale"],
        "status": row["status"],
        "data": row["data"],
        "actor": row["actor"],
        "note": row["note"],
        "createdAt": row["created_at"],
    }
