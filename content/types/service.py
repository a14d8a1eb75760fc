"""Content types: validating definitions, creating, changing and deleting them.

Changing a type never rewrites entries. A removed field's values stay in the
stored entries and their revisions, are left out when entries are read, and
are dropped from an entry the next time it is saved; adding the field back
with the same key brings unsaved values back. A retyped field keeps its old
values as stored; the next save of such an entry validates them against the
new type and names the field if they no longer fit (docs/content.md).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import psycopg2.errors

from common.ids import short_id
from content.auth.principal import Principal
from content.context import Context
from content.entries import store as entry_store
from content.errors import Conflict, NotFound, Problems
from content.types import store
from content.types.fields import check_definitions
from content.types.store import ContentType, TypeValues
from content.writes import Write, write

TYPE_NAME_RE = re.compile(r"^[a-z][a-zA-Z0-9_-]{0,63}$")
PREVIEW_PLACEHOLDERS = {"slug", "id", "locale", "type"}
_PLACEHOLDER_RE = re.compile(r"\{([^{}]*)\}")
TYPE_KEYS = {"name", "label", "fields", "single", "previewUrl"}


def _check_preview_url(value: Any, p: Problems) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > 2048:
        p.add("previewUrl", "must be a URL template string")
        return None
    for name in _PLACEHOLDER_RE.findall(value):
        if name not in PREVIEW_PLACEHOLDERS:
            p.add("previewUrl", f"{{{name}}} is not one of {{slug}}, {{id}}, {{locale}}, {{type}}")
    sample = _PLACEHOLDER_RE.sub("x", value)
    if not (sample.startswith(("http://", "https://", "/")) and " " not in sample):
        p.add("previewUrl", "must be an absolute http(s) URL or a path starting with /")
    return value


def fill_preview_url(template: str, values: dict[str, str]) -> str:
    """The address a preview URL template gives for one entry ({slug}, {id}, {locale}, {type})."""
    return _PLACEHOLDER_RE.sub(lambda m: quote(values.get(m.group(1), ""), safe="-_.~"), template)


def clean_type(
    body: dict[str, Any], type_names: set[str], *, existing: ContentType | None
) -> TypeValues:
    p = Problems()
    for key in sorted(set(body) - TYPE_KEYS):
        p.add(key, "is not a content type property")
    if existing is None:
        name = body.get("name")
        if not isinstance(name, str) or not TYPE_NAME_RE.match(name):
            p.add("name", "must start with a lowercase letter, then letters, digits, - or _")
    else:
        name = existing.name
        if "name" in body and body["name"] != name:
            p.add("name", "cannot change; create a new type instead")
    label = body.get("label", existing.label if existing else name)
    if not isinstance(label, str) or not label.strip() or len(label) > 200:
        p.add("label", "must be a non-empty string of at most 200 characters")
    fields = body.get("fields", existing.fields if existing else [])
    # A type may refer to itself (a page's parent page).
    check_definitions(fields, "fields", p, type_names | {str(name)})
    single = body.get("single", existing.single if existing else False)
    if not isinstance(single, bool):
        p.add("single", "must be true or false")
    preview = body.get("previewUrl", existing.preview_url if existing else None)
    preview = _check_preview_url(preview, p)
    p.raise_if_any()
    return TypeValues(
        name=str(name), label=str(label).strip(), fields=fields, single=single, preview_url=preview
    )


async def _changed(
    tx: Write, actor: Principal, action: str, name: str, summary: dict[str, Any] | None = None
) -> None:
    """Activity and the change notification (delivery serves type shapes)."""
    await tx.record(actor.actor(), action, "type", name, summary, notify={"type": name})


async def list_types(ctx: Context) -> list[ContentType]:
    async with ctx.db.connection() as conn:
        return await store.list_types(conn)


async def get_type(ctx: Context, name: str) -> ContentType:
    async with ctx.db.connection() as conn:
        row = await store.get_type(conn, name)
    if row is None:
        raise NotFound(f"no content type {name!r}")
    return row


async def create_type(ctx: Context, actor: Principal, body: dict[str, Any]) -> ContentType:
    async with write(ctx) as tx:
        values = clean_type(body, await store.type_names(tx.conn), existing=None)
        try:
            row = await store.insert_type(tx.conn, short_id(), values, tx.now)
        except psycopg2.errors.UniqueViolation:
            raise Conflict(
                f"a content type named {values.name!r} exists",
                details={"fields": [{"key": "name", "message": "is already in use"}]},
            ) from None
        await _changed(tx, actor, "type.created", row.name)
    return row


async def update_type(
    ctx: Context, actor: Principal, name: str, body: dict[str, Any]
) -> ContentType:
    async with write(ctx) as tx:
        existing = await store.get_type(tx.conn, name, lock=True)
        if existing is None:
            raise NotFound(f"no content type {name!r}")
        values = clean_type(body, await store.type_names(tx.conn), existing=existing)
        if (
            values.single
            and not existing.single
            and await entry_store.count_of_type(tx.conn, existing.id) > 1
        ):
            raise Conflict(
                "this type has several entries; a single-kind type holds one",
                "SINGLE_TYPE_HAS_ENTRIES",
            )
        row = await store.update_type(tx.conn, existing.id, values, tx.now)
        before = {d["key"]: d["type"] for d in existing.fields}
        after = {d["key"]: d["type"] for d in row.fields}
        summary = {
            "removedFields": sorted(set(before) - set(after)),
            "addedFields": sorted(set(after) - set(before)),
            "retypedFields": sorted(k for k in before if k in after and before[k] != after[k]),
        }
        await _changed(tx, actor, "type.updated", name, summary)
    return row


async def delete_type(ctx: Context, actor: Principal, name: str) -> None:
    async with write(ctx) as tx:
        existing = await store.get_type(tx.conn, name, lock=True)
        if existing is None:
            raise NotFound(f"no content type {name!r}")
        if await entry_store.count_of_type(tx.conn, existing.id):
            raise Conflict(
                "this type still has entries (trash included); purge them first", "TYPE_IN_USE"
            )
        referrers = await store.referencing_types(tx.conn, name)
        if referrers:
            raise Conflict(
                f"reference fields of {', '.join(referrers)} point at this type", "TYPE_IN_USE"
            )
        await store.delete_type(tx.conn, existing.id)
        await _changed(tx, actor, "type.deleted", name)
