"""A menu as a website reads it: the one function menu delivery calls.

:func:`resolve_menu` turns each ``entryId`` item into a ``url`` through the
referenced entry's type's preview URL template, and leaves out items whose
entry a delivery key could not read directly: a draft or unpublished entry,
a trashed or deleted one, a type outside the key's scopes, or a type without
a preview URL template (there is no address to give). An item left out does
not hide its children: they take its place, so a published page under a
draft one stays reachable. Address links (``url``) are kept exactly as written.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from common.db import Conn
from content.entries import store as entry_store
from content.entries.store import Entry
from content.keys.service import ALL_TYPES
from content.types import store as type_store
from content.types.service import fill_preview_url


def _entry_ids(items: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []
    for item in items:
        if "entryId" in item:
            found.append(item["entryId"])
        found.extend(_entry_ids(item.get("children", [])))
    return found


async def resolve_menu(
    conn: Conn, items: list[dict[str, Any]], scopes: Collection[str]
) -> list[dict[str, Any]]:
    """The tree for a reader whose delivery key has type ``scopes`` ('*' for all).

    Each item comes back as ``{label, url, children}``, with ``entryId`` kept on
    items that were entries.
    """
    ids = _entry_ids(items)
    entries = await entry_store.get_entries(conn, ids) if ids else {}
    templates = {t.name: t.preview_url for t in await type_store.list_types(conn)} if ids else {}

    def address(entry: Entry | None) -> str | None:
        if entry is None or entry.deleted_at is not None or entry.status != "published":
            return None
        if ALL_TYPES not in scopes and entry.type_name not in scopes:
            return None
        template = templates.get(entry.type_name)
        if not template:
            return None
        values = {
            "slug": entry.slug,
            "id": entry.id,
            "locale": entry.locale,
            "type": entry.type_name,
        }
        return fill_preview_url(template, values)

    def walk(level: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for item in level:
            children = walk(item.get("children", []))
            if "url" in item:
                out.append({"label": item["label"], "url": item["url"], "children": children})
                continue
            url = address(entries.get(item["entryId"]))
            if url is None:
                out.extend(children)
            else:
                out.append(
                    {
                        "label": item["label"],
                        "url": url,
                        "entryId": item["entryId"],
                        "children": children,
                    }
                )
        return out

    return walk(items)
