"""Entries: create, edit, status moves, trash, revisions, with the role rules.

Authors write only their own drafts; editors (content.publish) work on anyone's
content and move it live. Every saved change writes a revision, an activity
record and a change notification in the transaction that makes it.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

import psycopg2.errors

from common.db import Conn
from common.ids import short_id
from content.auth.credentials import require
from content.auth.principal import Actor, Principal
from content.context import Context
from content.entries import schedule, store
from content.entries.serializers import LAYOUT_KEY, visible_data
from content.entries.store import Entry, EntryChanges, EntryFilters, Revision
from content.entries.validation import (
    DEFAULT_LOCALE,
    RESERVED_SLUGS,
    check_data,
    check_locale,
    check_references,
    check_slug,
    check_title,
    slugify,
)
from content.errors import Conflict, Forbidden, NotFound, Problems
from content.http import Paging
from content.preview import store as preview_store
from content.taxonomies import store as taxonomy_store
from content.taxonomies.service import check_entry_terms
from content.taxonomies.store import Term
from content.types import store as type_store
from content.types.fields import FieldDefinition
from content.types.store import ContentType
from content.visual.checks import apply_definition
from content.writes import Write, write

STATUSES = ("draft", "published", "unpublished")
# What a list filters by: a status, or "scheduled" (drafts with a publishAt), as
# WordPress lists its future posts apart; "draft" still includes them.
SCHEDULED = "scheduled"
LIST_STATUSES = (*STATUSES, SCHEDULED)
ENTRY_KEYS = {"type", "title", "slug", "locale", "data", "status", "publishAt", "terms"}


@dataclasses.dataclass(frozen=True)
class EntryView:
    """An entry with what its JSON shows besides the row: its type's current
    fields (serializers.visible_data) and the terms it is filed under."""

    entry: Entry
    fields: list[FieldDefinition]
    terms: list[Term]


async def _views(conn: Conn, rows: list[Entry]) -> list[EntryView]:
    """Views of a page of entries, in two queries whatever its length."""
    if not rows:
        return []
    fields = {t.id: t.fields for t in await type_store.list_types(conn)}
    terms = await taxonomy_store.entry_terms(conn, [r.id for r in rows])
    return [EntryView(r, fields.get(r.type_id, []), terms[r.id]) for r in rows]


async def _view(ctx: Context, entry: Entry) -> EntryView:
    async with ctx.db.connection() as conn:
        return (await _views(conn, [entry]))[0]


async def list_entries(
    ctx: Context, *, trashed: bool, filters: EntryFilters, sort: tuple[str, bool], paging: Paging
) -> tuple[list[EntryView], int]:
    """A page of the live entries (or of the trash) and how many match in all."""
    async with ctx.db.connection() as conn:
        rows, total = await store.list_entries(
            conn,
            trashed=trashed,
            filters=filters,
            sort=sort,
            limit=paging.limit,
            offset=paging.offset,
        )
        return await _views(conn, rows), total


def ensure_can_edit(principal: Principal, entry: Entry) -> None:
    require(principal, "content.write")
    if principal.can("content.publish"):
        return
    if entry.author_id != principal.user.id:
        raise Forbidden("authors change only their own entries", "NOT_YOUR_ENTRY")
    if entry.status != "draft":
        raise Forbidden(f"authors change only drafts; this entry is {entry.status}", "NOT_A_DRAFT")


def _parse_moment(value: Any, p: Problems, key: str) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        p.add(key, "must be an ISO 8601 time with a time zone")
        return None
    return moment


async def _unique_slug(conn: Conn, type_id: str, locale: str, base: str) -> str:
    taken = await store.slugs_like(conn, type_id, locale, base) | RESERVED_SLUGS
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def merge_data(entry: Entry, ctype: ContentType, changes: dict[str, Any]) -> dict[str, Any]:
    """A PATCH's data: top-level keys merge onto the stored data; values of fields
    the type no longer declares are dropped; ``"__layout": null`` removes it."""
    merged = {**visible_data(entry.data, ctype.fields), **changes}
    if changes.get(LAYOUT_KEY, "") is None:
        merged.pop(LAYOUT_KEY)
    return merged


async def checked_data(
    ctx: Context, conn: Conn, data: Any, ctype: ContentType, p: Problems
) -> dict[str, Any]:
    """Data as saved: the type's field checks, references and media, then the host's
    visual definition of the type (layout section ids, formatted fields, slugs)."""
    cleaned, refs = check_data(data, ctype.fields, p)
    await check_references(conn, refs, p)
    return await apply_definition(conn, cleaned, ctx.visual_definition(ctype.name), p)


def _slug_taken() -> Conflict:
    return Conflict(
        "another entry of this type and locale has this slug",
        details={"fields": [{"key": "slug", "message": "is already in use"}]},
    )


async def _changed(
    tx: Write,
    actor: Actor,
    entry: Entry,
    action: str,
    summary: dict[str, Any] | None = None,
    *,
    was: str | None = None,
) -> None:
    """Activity and the change notification, inside the transaction.

    The notification names the entry (id, slug, type) and its status before
    (``was``) and after, never its content: the realtime socket tells a
    delivery key only of changes to what it can read (content/realtime/).
    """
    await tx.record(
        actor,
        action,
        "entry",
        entry.id,
        {"title": entry.title, "type": entry.type_name, **(summary or {})},
        notify={
            "id": entry.id,
            "slug": entry.slug,
            "type": entry.type_name,
            "status": entry.status,
            "was": entry.status if was is None else was,
        },
    )


async def create_entry(ctx: Context, actor: Principal, body: dict[str, Any]) -> EntryView:
    require(actor, "content.write")
    p = Problems()
    for key in sorted(set(body) - ENTRY_KEYS):
        p.add(key, "is not an entry property")
    type_name = body.get("type")
    title = check_title(body.get("title"), p)
    locale = check_locale(body.get("locale", DEFAULT_LOCALE), p)
    slug = check_slug(body["slug"], p) if body.get("slug") is not None else None
    status = body.get("status", "draft")
    if status not in STATUSES:
        p.add("status", f"must be one of {', '.join(STATUSES)}")
    publish_at = _parse_moment(body.get("publishAt"), p, "publishAt")
    now = ctx.clock.now()
    if publish_at is not None:
        require(actor, "content.publish")
        if publish_at <= now:
            p.add("publishAt", "must be in the future")
        if status != "draft":
            p.add("publishAt", "only a draft can be scheduled")
    if status in ("published", "unpublished"):
        require(actor, "content.publish")
    async with write(ctx, now=now) as tx:
        conn = tx.conn
        ctype = (
            await type_store.get_type(conn, type_name, lock=True)
            if isinstance(type_name, str)
            else None
        )
        if ctype is None:
            p.add("type", "must name an existing content type")
            p.raise_if_any()
        assert ctype is not None
        data = await checked_data(ctx, conn, body.get("data", {}), ctype, p)
        terms = await check_entry_terms(conn, body["terms"], p) if "terms" in body else []
        p.raise_if_any()
        if ctype.single and await store.count_of_type(conn, ctype.id):
            raise Conflict("a single-kind type holds exactly one entry", "SINGLE_EXISTS")
        if slug is None:
            slug = await _unique_slug(conn, ctype.id, locale, slugify(title))
        entry_id = short_id()
        try:
            await store.insert_entry(
                conn,
                entry_id=entry_id,
                type_id=ctype.id,
                slug=slug,
                title=title,
                data=data,
                status=status,
                locale=locale,
                author_id=actor.user.id,
                publish_at=publish_at,
                published_at=now if status == "published" else None,
                now=now,
            )
        except psycopg2.errors.UniqueViolation:
            raise _slug_taken() from None
        entry = await store.get_entry(conn, entry_id)
        assert entry is not None
        await store.insert_revision(conn, entry, actor.actor(), "created", now)
        await taxonomy_store.set_entry_terms(conn, entry_id, terms)
        if publish_at is not None:
            await schedule.schedule(conn, entry_id, publish_at)
        await _changed(tx, actor.actor(), entry, "entry.created", {"status": status})
    return await _view(ctx, entry)


async def get_entry(ctx: Context, entry_id: str, *, trashed: bool | None = False) -> Entry:
    async with ctx.db.connection() as conn:
        entry = await store.get_entry(conn, entry_id, trashed=trashed)
    if entry is None:
        raise NotFound("no such entry")
    return entry


async def view_entry(ctx: Context, entry_id: str) -> EntryView:
    return await _view(ctx, await get_entry(ctx, entry_id))


async def type_fields(ctx: Context, type_id: str) -> list[FieldDefinition]:
    async with ctx.db.connection() as conn:
        ctype = await type_store.get_type_by_id(conn, type_id)
    return ctype.fields if ctype else []


def _status_action(before: str, after: str) -> str | None:
    if before == after:
        return None
    return {"published": "entry.published", "unpublished": "entry.unpublished"}.get(
        after, "entry.drafted"
    )


async def _editable(conn: Conn, actor: Principal, entry_id: str) -> Entry:
    """The live entry, locked for this transaction, if the actor may edit it."""
    entry = await store.get_entry(conn, entry_id, lock=True)
    if entry is None:
        raise NotFound("no such entry")
    ensure_can_edit(actor, entry)
    return entry


async def update_entry(
    ctx: Context, actor: Principal, entry_id: str, body: dict[str, Any], *, note: str = ""
) -> EntryView:
    return await _view(ctx, await _update(ctx, actor, entry_id, body, note))


async def _update(
    ctx: Context, actor: Principal, entry_id: str, body: dict[str, Any], note: str
) -> Entry:
    p = Problems()
    for key in sorted(set(body) - (ENTRY_KEYS - {"type"})):
        p.add(key, "is not an entry property" if key != "type" else "cannot change")
    now = ctx.clock.now()
    async with write(ctx, now=now) as tx:
        conn = tx.conn
        entry = await _editable(conn, actor, entry_id)
        ctype = await type_store.get_type_by_id(conn, entry.type_id)
        assert ctype is not None
        changes: EntryChanges = {}
        if "title" in body:
            changes["title"] = check_title(body["title"], p)
        if "slug" in body:
            changes["slug"] = check_slug(body["slug"], p)
        if "locale" in body:
            changes["locale"] = check_locale(body["locale"], p)
        if "data" in body:
            if not isinstance(body["data"], dict):
                p.add("data", "must be an object")
            else:
                merged = merge_data(entry, ctype, body["data"])
                changes["data"] = await checked_data(ctx, conn, merged, ctype, p)
        status = body.get("status", entry.status)
        if status not in STATUSES:
            p.add("status", f"must be one of {', '.join(STATUSES)}")
        elif status != entry.status:
            # Going live, coming down or leaving unpublished: content.publish.
            require(actor, "content.publish")
            if status == "unpublished" and entry.status != "published":
                p.add("status", "only a published entry can be unpublished")
            changes["status"] = status
            if status == "published":
                changes["published_at"] = now
                changes["publish_at"] = None
        if "publishAt" in body:
            require(actor, "content.publish")
            publish_at = _parse_moment(body["publishAt"], p, "publishAt")
            if publish_at is not None and publish_at <= now:
                p.add("publishAt", "must be in the future")
            if publish_at is not None and status == "published":
                p.add("publishAt", "this entry is already published")
            changes["publish_at"] = publish_at
        terms = await check_entry_terms(conn, body["terms"], p) if "terms" in body else None
        p.raise_if_any()
        # Terms are not part of a revision (as in WordPress): filing alone is
        # recorded and notified, but writes no revision.
        refiled = terms is not None and await taxonomy_store.set_entry_terms(conn, entry.id, terms)
        summary = {"fields": sorted(k for k in body if k != "status")}
        if not changes:
            if refiled:
                await _changed(tx, actor.actor(), entry, "entry.updated", {"fields": ["terms"]})
            return entry
        return await save_changes(tx, entry, changes, actor.actor(), note, summary)


async def save_changes(
    tx: Write,
    entry: Entry,
    changes: EntryChanges,
    actor: Actor,
    note: str,
    summary: dict[str, Any],
) -> Entry:
    """Write checked ``changes`` to an entry locked in ``tx``: the row, its
    schedule, a revision, the activity and the notification. Every edit goes
    through here, an editor's PATCH and the publication job alike."""
    entry_id = entry.id
    try:
        await store.update_entry(tx.conn, entry_id, changes, tx.now)
    except psycopg2.errors.UniqueViolation:
        raise _slug_taken() from None
    if "publish_at" in changes and changes["publish_at"] != entry.publish_at:
        # For the publication job this cancels its own key: a no-op, as a
        # running job is no longer pending.
        await schedule.reschedule(tx.conn, entry_id, entry.publish_at, changes["publish_at"])
    updated = await store.get_entry(tx.conn, entry_id)
    assert updated is not None
    await store.insert_revision(tx.conn, updated, actor, note, tx.now)
    action = _status_action(entry.status, updated.status)
    if "publish_at" in changes and changes["publish_at"] and not action:
        action = "entry.scheduled"
    await _changed(tx, actor, updated, action or "entry.updated", summary, was=entry.status)
    return updated


async def trash_entry(ctx: Context, actor: Principal, entry_id: str) -> EntryView:
    async with write(ctx) as tx:
        conn, now = tx.conn, tx.now
        entry = await _editable(conn, actor, entry_id)
        await store.set_trashed(conn, entry_id, now, now)
        # Deleting the source entry invalidates its preview links (purging cascades).
        await preview_store.drop_for_entry(conn, entry_id)
        await schedule.reschedule(conn, entry_id, entry.publish_at, None)
        await _changed(tx, actor.actor(), entry, "entry.deleted")
        trashed = await store.get_entry(conn, entry_id, trashed=True)
    assert trashed is not None
    return await _view(ctx, trashed)


async def restore_entry(ctx: Context, actor: Principal, entry_id: str) -> EntryView:
    """Back from the trash, as a draft: nothing goes live again unreviewed."""
    async with write(ctx) as tx:
        conn = tx.conn
        entry = await store.get_entry(conn, entry_id, lock=True, trashed=True)
        if entry is None:
            raise NotFound("no such entry in the trash")
        ensure_can_edit(actor, dataclasses.replace(entry, status="draft"))
        await store.set_trashed(conn, entry_id, None, tx.now)
        restored = await store.get_entry(conn, entry_id)
        assert restored is not None
        await _changed(tx, actor.actor(), restored, "entry.restored")
    return await _view(ctx, restored)


async def purge_entry(ctx: Context, actor: Principal, entry_id: str) -> None:
    require(actor, "content.publish")
    async with write(ctx) as tx:
        entry = await store.get_entry(tx.conn, entry_id, lock=True, trashed=True)
        if entry is None:
            raise NotFound("no such entry in the trash")
        await store.purge_entry(tx.conn, entry_id)
        await _changed(tx, actor.actor(), entry, "entry.purged")


async def list_revisions(ctx: Context, entry_id: str, paging: Paging) -> tuple[list[Revision], int]:
    """A page of an entry's revisions, newest first; a trashed entry's too."""
    entry = await get_entry(ctx, entry_id, trashed=None)
    async with ctx.db.connection() as conn:
        return await store.list_revisions(conn, entry.id, limit=paging.limit, offset=paging.offset)


async def get_revision(ctx: Context, entry_id: str, number: int) -> Revision:
    async with ctx.db.connection() as conn:
        revision = await store.get_revision(conn, entry_id, number)
    if revision is None:
        raise NotFound("no such revision")
    return revision


async def restore_revision(ctx: Context, actor: Principal, entry_id: str, number: int) -> EntryView:
    """Bring back an earlier version's title, slug, locale and data, as a new revision."""
    revision = await get_revision(ctx, entry_id, number)
    entry = await get_entry(ctx, entry_id)
    # Values of fields the type has since dropped stay in the old revision only.
    data = visible_data(revision.data, await type_fields(ctx, entry.type_id))
    data.setdefault(LAYOUT_KEY, None)
    body = {
        "title": revision.title,
        "slug": revision.slug,
        "locale": revision.locale,
        "data": data,
    }
    return await update_entry(ctx, actor, entry_id, body, note=f"restored from revision {number}")
