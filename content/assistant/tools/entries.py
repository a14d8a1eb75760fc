"""Entries: the reads of /api/entries, /api/trash and revisions, and the seven entry proposals.

Reads call content/entries/service.py and serialize with entry_json and
revision_json, as the routes do. A proposal is checked with the validators a
PATCH runs (title, slug, locale, the type's fields, references, the visual
definition's section ids, terms) on a connection that writes nothing, and is
applied through the same service function as the manual route.
"""

from __future__ import annotations

import dataclasses

from common.openapi import array, integer, string
from content.assistant.tools.base import (
    Applied,
    Args,
    Draft,
    Json,
    Refused,
    Target,
    changes,
    jsonable,
    offset_meta,
    params,
    propose,
    read,
    refused_by,
    unchanged,
    window,
)
from content.auth.principal import Principal
from content.context import Context
from content.entries import service, store
from content.entries.serializers import LAYOUT_KEY, entry_json, revision_json, visible_data
from content.entries.store import EntryFilters
from content.entries.validation import (
    DEFAULT_LOCALE,
    LOCALE_RE,
    MAX_SLUG,
    MAX_TITLE,
    SLUG_RE,
    check_locale,
    check_slug,
    check_title,
)
from content.errors import ContentError, Problems
from content.media import service as media_service
from content.media.serializers import media_json
from content.media.store import MediaFilters
from content.taxonomies.service import MAX_ENTRY_TERMS, check_entry_terms
from content.types import store as type_store

_ID = string(min_length=1, max_length=100)
_OFFSET = integer(minimum=0, maximum=999_999_999)
_LIMIT = integer(minimum=1, maximum=100)
_TITLE = string(min_length=1, max_length=MAX_TITLE)
_SLUG = string(pattern=SLUG_RE.pattern, max_length=MAX_SLUG)
_LOCALE = string(pattern=LOCALE_RE.pattern)
_DATA = {
    "type": "object",
    "description": "field key -> value, only the fields to change; __layout is"
    " {order: [section ids], hidden: [section ids]}",
}
_TERMS = array(string(min_length=1), max_items=MAX_ENTRY_TERMS)
MAX_SELECTED = 8


def _json(view: service.EntryView) -> Json:
    return jsonable(entry_json(view.entry, view.fields, view.terms))


def _filters(args: Args) -> EntryFilters:
    return EntryFilters(
        type=args.get("type"),
        status=args.get("status"),
        locale=args.get("locale"),
        search=(args.get("search") or "").strip() or None,
        term=args.get("term"),
    )


def _selected(entry: Json, keys: list[str]) -> Json:
    """An entry as the list shows it, its data narrowed to the selected fields."""
    data = entry["data"]
    return {**entry, "data": {k: data[k] for k in keys if k in data}}


async def _entries(ctx: Context, args: Args, *, trashed: bool) -> Json:
    paging = window(args)
    views, total = await service.list_entries(
        ctx, trashed=trashed, filters=_filters(args), sort=("updatedAt", True), paging=paging
    )
    keys = list(args.get("fields", []))
    return {
        "data": [_selected(_json(v), keys) for v in views],
        "meta": offset_meta(total, paging),
    }


async def list_entries(ctx: Context, principal: Principal, args: Args) -> Json:
    return await _entries(ctx, args, trashed=False)


async def list_trash(ctx: Context, principal: Principal, args: Args) -> Json:
    return await _entries(ctx, args, trashed=True)


async def search_site(ctx: Context, principal: Principal, args: Args) -> Json:
    """Pages (entries) by title, files by name, alt text, caption or folder."""
    query = args["query"].strip()
    paging = window(args, 10)
    views, pages = await service.list_entries(
        ctx,
        trashed=False,
        filters=EntryFilters(search=query),
        sort=("updatedAt", True),
        paging=paging,
    )
    media, files = await media_service.list_media(
        ctx, MediaFilters(search=query), paging.offset, paging.limit
    )
    return {
        "pages": {"data": [_json(v) for v in views], "meta": offset_meta(pages, paging)},
        "files": {
            "data": [jsonable(media_json(m)) for m in media],
            "meta": offset_meta(files, paging),
        },
    }


async def get_entry(ctx: Context, principal: Principal, args: Args) -> Json:
    return _json(await service.view_entry(ctx, args["entryId"]))


async def get_page_layout(ctx: Context, principal: Principal, args: Args) -> Json:
    """The declared sections of the entry's page, their order and which are hidden."""
    view = await service.view_entry(ctx, args["entryId"])
    definition = ctx.visual_definition(view.entry.type_name)
    if definition is None:
        raise Refused(f"the {view.entry.type_name} type has no visual page definition")
    stored = view.entry.data.get(LAYOUT_KEY) or {}
    order = list(stored.get("order") or [])
    order += [s for s in definition.section_ids if s not in order]
    hidden = list(stored.get("hidden") or [])
    return {
        "entryId": view.entry.id,
        "type": view.entry.type_name,
        "sections": [
            {
                "id": s.id,
                "label": s.label,
                "fields": list(s.fields),
                "movable": s.movable,
                "hidden": s.id in hidden,
                "collection": dataclasses.asdict(s.collection) if s.collection else None,
            }
            for s in definition.sections
        ],
        "order": order,
        "hidden": hidden,
        "stored": jsonable(stored) if stored else None,
    }


async def list_revisions(ctx: Context, principal: Principal, args: Args) -> Json:
    paging = window(args)
    rows, total = await service.list_revisions(ctx, args["entryId"], paging)
    return {
        "data": [jsonable(revision_json(r)) for r in rows],
        "meta": offset_meta(total, paging),
    }


# --- proposals -------------------------------------------------------------


async def current_entry(ctx: Context, principal: Principal, entry_id: str) -> Json | None:
    try:
        return _json(await service.view_entry(ctx, entry_id))
    except ContentError:
        return None


async def current_trashed(ctx: Context, principal: Principal, entry_id: str) -> Json | None:
    try:
        entry = await service.get_entry(ctx, entry_id, trashed=True)
    except ContentError:
        return None
    fields = await service.type_fields(ctx, entry.type_id)
    return jsonable(entry_json(entry, fields))


async def _editable(ctx: Context, principal: Principal, entry_id: str) -> service.EntryView:
    try:
        view = await service.view_entry(ctx, entry_id)
        service.ensure_can_edit(principal, view.entry)
    except ContentError as exc:
        raise refused_by(exc) from None
    return view


def _target(entry_id: str | None) -> Target:
    return Target("entry", entry_id)


def _data_diff(before: Json, after: Json) -> list[Json]:
    keys = {k: after.get(k) for k in {*before, *after}}
    return changes(before, dict(sorted(keys.items())), "data.")


async def _check_fields(
    ctx: Context, view_type_id: str, body: Args, base_data: Json | None, p: Problems
) -> Json:
    """The checked values of title, slug, locale, data and terms of ``body``
    (data merged onto ``base_data`` as a PATCH merges it); problems added to p."""
    out: Json = {}
    if "title" in body:
        out["title"] = check_title(body["title"], p)
    if "slug" in body:
        out["slug"] = check_slug(body["slug"], p)
    if "locale" in body:
        out["locale"] = check_locale(body["locale"], p)
    async with ctx.db.connection() as conn:
        ctype = await type_store.get_type_by_id(conn, view_type_id)
        assert ctype is not None
        if "data" in body:
            data = {**(base_data or {}), **body["data"]}
            if body["data"].get(LAYOUT_KEY, "") is None:
                data.pop(LAYOUT_KEY)
            out["data"] = await service.checked_data(ctx, conn, data, ctype, p)
        if "terms" in body:
            out["terms"] = await check_entry_terms(conn, body["terms"], p)
    return out


def _raise(p: Problems) -> None:
    try:
        p.raise_if_any()
    except ContentError as exc:
        raise refused_by(exc) from None


async def draft_update(ctx: Context, principal: Principal, args: Args) -> Draft:
    body = {k: v for k, v in args.items() if k != "entryId"}
    if not body:
        raise Refused("name at least one of title, slug, locale or data to change")
    view = await _editable(ctx, principal, args["entryId"])
    before = _json(view)
    p = Problems()
    visible = visible_data(view.entry.data, view.fields)
    checked = await _check_fields(ctx, view.entry.type_id, body, visible, p)
    _raise(p)
    diff = changes(before, {k: v for k, v in checked.items() if k != "data"})
    if "data" in checked:
        # Only the fields the proposal names: the rest is merged back unchanged.
        named = {k: checked["data"].get(k) for k in sorted(body["data"])}
        diff += changes(visible, named, "data.")
    if not diff:
        raise unchanged("the entry")
    return Draft(_target(view.entry.id), diff, ("content.write",), before)


async def apply_update(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    body = {k: v for k, v in args.items() if k != "entryId"}
    return Applied(_json(await service.update_entry(ctx, principal, args["entryId"], body)))


async def draft_restore(ctx: Context, principal: Principal, args: Args) -> Draft:
    view = await _editable(ctx, principal, args["entryId"])
    try:
        revision = await service.get_revision(ctx, view.entry.id, args["number"])
    except ContentError as exc:
        raise refused_by(exc) from None
    before = _json(view)
    old = {"title": revision.title, "slug": revision.slug, "locale": revision.locale}
    diff = changes(before, old)
    visible = visible_data(view.entry.data, view.fields)
    diff += _data_diff(visible, visible_data(revision.data, view.fields))
    if not diff:
        raise unchanged(f"the entry (revision {revision.number} holds the same)")
    return Draft(_target(view.entry.id), diff, ("content.write",), before)


async def apply_restore(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    view = await service.restore_revision(ctx, principal, args["entryId"], args["number"])
    return Applied(_json(view))


async def draft_untrash(ctx: Context, principal: Principal, args: Args) -> Draft:
    try:
        entry = await service.get_entry(ctx, args["entryId"], trashed=True)
        service.ensure_can_edit(principal, dataclasses.replace(entry, status="draft"))
    except ContentError as exc:
        raise refused_by(exc) from None
    before = await current_trashed(ctx, principal, entry.id)
    diff = [{"field": "deletedAt", "before": jsonable(entry.deleted_at), "after": None}]
    return Draft(_target(entry.id), diff, ("content.write",), before)


async def apply_untrash(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    return Applied(_json(await service.restore_entry(ctx, principal, args["entryId"])))


async def draft_create(ctx: Context, principal: Principal, args: Args) -> Draft:
    async with ctx.db.connection() as conn:
        ctype = await type_store.get_type(conn, args["type"])
        taken = ctype is not None and ctype.single and await store.count_of_type(conn, ctype.id)
    if ctype is None:
        raise Refused(f"no content type {args['type']!r}; list_content_types names them")
    if taken:
        raise Refused(f"{ctype.name} is a single-kind type and has its entry; update that one")
    p = Problems()
    body = {"data": {}, **args}
    checked = await _check_fields(ctx, ctype.id, body, None, p)
    _raise(p)
    after: Json = {
        "type": ctype.name,
        "title": checked["title"],
        "slug": checked.get("slug"),
        "locale": checked.get("locale", DEFAULT_LOCALE),
        "status": "draft",
    }
    diff = changes(None, after)
    diff += _data_diff({}, {k: v for k, v in checked["data"].items() if v not in (None, "", [])})
    if "terms" in checked:
        diff += changes(None, {"terms": checked["terms"]})
    return Draft(_target(None), diff, ("content.write",))


async def apply_create(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    return Applied(_json(await service.create_entry(ctx, principal, dict(args))))


async def draft_status(ctx: Context, principal: Principal, args: Args) -> Draft:
    view = await _editable(ctx, principal, args["entryId"])
    status = args["status"]
    if status == view.entry.status:
        raise unchanged(f"the entry ({status})")
    if status == "unpublished" and view.entry.status != "published":
        raise Refused("only a published entry can be unpublished")
    # Moving an entry's status is the publishing permission's (the PATCH route).
    needs = ("content.write", "content.publish")
    if not principal.can("content.publish"):
        raise Refused(
            f"moving an entry to {status} needs content.publish, which the"
            f" {principal.user.role} role does not have"
        )
    before = _json(view)
    return Draft(_target(view.entry.id), changes(before, {"status": status}), needs, before)


async def apply_status(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    body = {"status": args["status"]}
    return Applied(_json(await service.update_entry(ctx, principal, args["entryId"], body)))


async def draft_delete(ctx: Context, principal: Principal, args: Args) -> Draft:
    view = await _editable(ctx, principal, args["entryId"])
    before = _json(view)
    diff = [{"field": "deletedAt", "before": None, "after": "moved to the trash (restorable)"}]
    return Draft(_target(view.entry.id), diff, ("content.write",), before)


async def apply_delete(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    return Applied(_json(await service.trash_entry(ctx, principal, args["entryId"])))


async def draft_terms(ctx: Context, principal: Principal, args: Args) -> Draft:
    view = await _editable(ctx, principal, args["entryId"])
    p = Problems()
    checked = await _check_fields(ctx, view.entry.type_id, {"terms": args["terms"]}, None, p)
    _raise(p)
    before = _json(view)
    old = [t["id"] for t in before["terms"]]
    if sorted(old) == sorted(checked["terms"]):
        raise unchanged("the entry's filing")
    diff = [{"field": "terms", "before": old, "after": checked["terms"]}]
    return Draft(_target(view.entry.id), diff, ("content.write",), before)


async def apply_terms(
    ctx: Context, principal: Principal, args: Args, target: str | None, extra: Args
) -> Applied:
    body = {"terms": args["terms"]}
    return Applied(_json(await service.update_entry(ctx, principal, args["entryId"], body)))


_LIST = {
    "type": string(description="a content type name"),
    "status": string(enum=service.STATUSES),
    "locale": _LOCALE,
    "search": string(max_length=200, description="part of the title"),
    "term": string(description="a term slug, or taxonomy:slug"),
    "offset": _OFFSET,
    "limit": _LIMIT,
}
_ENTRY = params({"entryId": _ID}, required=("entryId",))

TOOLS = (
    read(
        "list_entries",
        "content.read",
        "Entries, newest change first, paged by offset; each with the data fields named in"
        f" `fields` (up to {MAX_SELECTED}).",
        params({**_LIST, "fields": array(string(min_length=1), max_items=MAX_SELECTED)}),
        list_entries,
    ),
    read(
        "search_site",
        "content.read",
        "Find pages (entries by title) and files (media by name, alt text, caption, folder).",
        params(
            {"query": string(min_length=1, max_length=200), "offset": _OFFSET, "limit": _LIMIT},
            required=("query",),
        ),
        search_site,
    ),
    read(
        "get_entry",
        "content.read",
        "One entry with its data and the terms it is filed under.",
        _ENTRY,
        get_entry,
    ),
    read(
        "get_page_layout",
        "content.read",
        "The visual page of an entry: its declared sections, their order and which are hidden.",
        _ENTRY,
        get_page_layout,
        visual_only=True,
    ),
    read(
        "list_revisions",
        "content.read",
        "An entry's saved versions, newest first.",
        params({"entryId": _ID, "offset": _OFFSET, "limit": _LIMIT}, required=("entryId",)),
        list_revisions,
    ),
    read(
        "list_trash",
        "content.write",
        "Entries in the trash (restorable), newest change first.",
        params(_LIST),
        list_trash,
    ),
    propose(
        "propose_entry_update",
        "content.write",
        "Propose changing an entry's title, slug, locale or data fields (only the fields"
        " given; data.__layout reorders or hides the page's sections). Checked like a save.",
        params(
            {"entryId": _ID, "title": _TITLE, "slug": _SLUG, "locale": _LOCALE, "data": _DATA},
            required=("entryId",),
        ),
        draft=draft_update,
        apply=apply_update,
        current=current_entry,
    ),
    propose(
        "propose_revision_restore",
        "content.write",
        "Propose bringing back an earlier saved version of an entry (list_revisions numbers them).",
        params({"entryId": _ID, "number": integer(minimum=1)}, required=("entryId", "number")),
        draft=draft_restore,
        apply=apply_restore,
        current=current_entry,
    ),
    propose(
        "propose_entry_untrash",
        "content.write",
        "Propose restoring an entry from the trash (it comes back as it was, not live).",
        _ENTRY,
        draft=draft_untrash,
        apply=apply_untrash,
        current=current_trashed,
    ),
    propose(
        "propose_entry_create",
        "content.write",
        "Propose a new draft entry of a type.",
        params(
            {
                "type": string(min_length=1),
                "title": _TITLE,
                "slug": _SLUG,
                "locale": _LOCALE,
                "data": _DATA,
                "terms": _TERMS,
            },
            required=("type", "title"),
        ),
        draft=draft_create,
        apply=apply_create,
    ),
    propose(
        "propose_entry_status",
        "content.write",
        "Propose publishing, unpublishing or returning an entry to draft"
        " (going live needs content.publish).",
        params(
            {"entryId": _ID, "status": string(enum=service.STATUSES)},
            required=("entryId", "status"),
        ),
        draft=draft_status,
        apply=apply_status,
        current=current_entry,
    ),
    propose(
        "propose_entry_delete",
        "content.write",
        "Propose moving an entry to the trash (restorable).",
        _ENTRY,
        draft=draft_delete,
        apply=apply_delete,
        current=current_entry,
    ),
    propose(
        "propose_entry_terms",
        "content.write",
        "Propose the terms an entry is filed under (term ids from list_taxonomies; replaces"
        " the current filing).",
        params({"entryId": _ID, "terms": _TERMS}, required=("entryId", "terms")),
        draft=draft_terms,
        apply=apply_terms,
        current=current_entry,
    ),
)
