"""Entries as delivery serves them: media, galleries and references expanded.

A page of entries is expanded in a fixed number of queries whatever its
size: one per reference level (every id of the level at once), one for all
the media, one for terms and one for authors when asked. A referenced entry
is re-read with the delivery rules (published, not trashed, a type inside
the key's scopes), so a reference never shows what the key could not request
directly: a single reference to such an entry reads ``null``, a list leaves
it out. References expand to full entries down to :data:`MAX_DEPTH` levels;
references one level deeper are stubs ``{id, type, slug}`` (still checked),
which is also what stops a cycle (docs/content.md, "Delivery API").
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Any

from common.db import Conn
from content.delivery import store
from content.entries.serializers import visible_data
from content.entries.store import Entry
from content.keys.service import ALL_TYPES
from content.media import store as media_store
from content.media.store import Media
from content.taxonomies import store as taxonomy_store
from content.taxonomies.serializers import filed_json
from content.types.fields import FieldDefinition

# The top entry is depth 0; its references depth 1; theirs depth 2, whose own
# references are stubs.
MAX_DEPTH = 2
INCLUDES = ("terms", "author")

# (field definition, value) -> replacement value
Visit = Callable[[FieldDefinition, Any], Any]


def in_scope(type_name: str, scopes: Collection[str]) -> bool:
    return ALL_TYPES in scopes or type_name in scopes


def _walk(data: dict[str, Any], fields: list[FieldDefinition], visit: Visit) -> dict[str, Any]:
    """A copy of ``data`` with media, gallery and reference values passed through ``visit``."""
    out = dict(data)
    for d in fields:
        key, kind = d["key"], d.get("type")
        value = out.get(key)
        if value is None:
            continue
        if kind in ("media", "gallery", "reference"):
            out[key] = visit(d, value)
        elif kind == "list" and isinstance(value, list):
            out[key] = [
                _walk(item, d.get("fields", []), visit) if isinstance(item, dict) else item
                for item in value
            ]
    return out


def _ids(value: Any) -> list[str]:
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return [value] if isinstance(value, str) else []


def media_json(media: Media) -> dict[str, Any]:
    """A media object as a website needs it (no uploader: delivery is public)."""
    return {
        "id": media.id,
        "url": media.url,
        "filename": media.filename,
        "type": media.type,
        "size": media.size,
        "width": media.width,
        "height": media.height,
        "alt": media.alt,
        "caption": media.caption,
    }


def stub(entry: Entry) -> dict[str, Any]:
    return {"id": entry.id, "type": entry.type_name, "slug": entry.slug}


class Expander:
    """One request's expansion: the key's scopes and the types' fields."""

    def __init__(self, scopes: Collection[str], fields: dict[str, list[FieldDefinition]]) -> None:
        self.scopes = scopes
        self.fields = fields  # type name -> field definitions
        self.targets: dict[str, Entry] = {}
        self.media: dict[str, Media] = {}

    def _data(self, entry: Entry) -> dict[str, Any]:
        return visible_data(entry.data, self.fields.get(entry.type_name, []))

    def _references(self, entries: Iterable[Entry]) -> set[str]:
        found: set[str] = set()

        def visit(d: FieldDefinition, value: Any) -> Any:
            if d.get("type") == "reference":
                found.update(_ids(value))
            return value

        for entry in entries:
            _walk(self._data(entry), self.fields.get(entry.type_name, []), visit)
        return found

    def _media_ids(self, entries: Iterable[Entry]) -> set[str]:
        found: set[str] = set()

        def visit(d: FieldDefinition, value: Any) -> Any:
            if d.get("type") in ("media", "gallery"):
                found.update(_ids(value))
            return value

        for entry in entries:
            _walk(self._data(entry), self.fields.get(entry.type_name, []), visit)
        return found

    async def load(self, conn: Conn, top: list[Entry]) -> None:
        """Every readable reference target and every media row the page shows."""
        level = top
        expanded: list[Entry] = list(top)
        for depth in range(1, MAX_DEPTH + 2):
            wanted = self._references(level) - set(self.targets)
            found = await store.published_entries(conn, sorted(wanted))
            level = [e for e in found.values() if in_scope(e.type_name, self.scopes)]
            self.targets.update((e.id, e) for e in level)
            if depth <= MAX_DEPTH:
                expanded.extend(level)
            if not level:
                break
        self.media = await media_store.media_by_ids(conn, sorted(self._media_ids(expanded)))

    def entry(self, entry: Entry, depth: int = 0) -> dict[str, Any]:
        def visit(d: FieldDefinition, value: Any) -> Any:
            kind = d.get("type")
            if kind == "media":
                found = self.media.get(value) if isinstance(value, str) else None
                return media_json(found) if found else None
            if kind == "gallery":
                return [media_json(self.media[i]) for i in _ids(value) if i in self.media]
            shown = [self._target(i, depth) for i in _ids(value)]
            if isinstance(value, list):
                return [s for s in shown if s is not None]
            return shown[0] if shown else None

        return {
            "id": entry.id,
            "type": entry.type_name,
            "slug": entry.slug,
            "title": entry.title,
            "locale": entry.locale,
            "publishedAt": entry.published_at,
            "updatedAt": entry.updated_at,
            "data": _walk(self._data(entry), self.fields.get(entry.type_name, []), visit),
        }

    def _target(self, entry_id: str, depth: int) -> dict[str, Any] | None:
        target = self.targets.get(entry_id)
        if target is None:
            return None
        return self.entry(target, depth + 1) if depth < MAX_DEPTH else stub(target)


async def attach_includes(
    conn: Conn, items: list[dict[str, Any]], rows: list[Entry], include: Collection[str]
) -> None:
    """include=terms,author on top-level entries, one query each."""
    ids = [r.id for r in rows]
    if "terms" in include:
        terms = await taxonomy_store.entry_terms(conn, ids)
        for item in items:
            item["terms"] = [filed_json(t) for t in terms.get(item["id"], [])]
    if "author" in include:
        names = await store.author_names(conn, sorted({r.author_id for r in rows if r.author_id}))
        for item, row in zip(items, rows, strict=True):
            author = row.author_id
            item["author"] = (
                {"id": author, "name": names[author]} if author and author in names else None
            )
