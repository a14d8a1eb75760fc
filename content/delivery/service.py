"""What each delivery route answers, for a key's type scopes (docs/content.md, "Delivery API").

The questions are plain functions of a connection, the scopes and the parsed
query; :func:`answer` asks one on a connection of its own and keeps the
encoded answer in the in-process cache (cache.py). :func:`read_key` is the
delivery key a token names. Published content only: an entry that is a
draft, unpublished, trashed or of a type outside the scopes does not exist
for the key (404, the same answer as for nothing at all).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Hashable
from dataclasses import dataclass
from typing import Any

from common.crypto import sha256_hex
from common.db import Conn
from common.web import json_response
from content.context import Context
from content.delivery import store
from content.delivery.cache import Answer, DeliveryCache
from content.delivery.expand import INCLUDES, Expander, attach_includes, in_scope
from content.entries import store as entry_store
from content.entries.store import SORTS, Entry, EntryFilters
from content.errors import NotFound, Unauthorized, invalid
from content.http import Paging, page_body
from content.keys import store as key_store
from content.keys.store import DeliveryKey
from content.menus import store as menu_store
from content.menus.resolution import resolve_menu
from content.preview import service as preview_service
from content.site.service import delivery_settings
from content.types import store as type_store
from content.types.serializers import type_shape
from content.types.store import ContentType

DEFAULT_SORT = "-publishedAt"
# A key's last use is written at most this often per process.
TOUCH_SECONDS = 60.0

# One delivery question: its answer's body, read on the connection given.
Question = Callable[[Conn, DeliveryKey], Awaitable[Any]]


@dataclass(frozen=True)
class ListQuery:
    paging: Paging
    term: str | None = None
    locale: str | None = None
    sort: tuple[str, bool] = ("publishedAt", True)
    include: frozenset[str] = frozenset()


def parse_sort(raw: str | None) -> tuple[str, bool]:
    raw = raw or DEFAULT_SORT
    column = raw.lstrip("-")
    if column not in SORTS:
        raise invalid("sort", f"must be one of {', '.join(SORTS)}, optionally prefixed with -")
    return column, raw.startswith("-")


def parse_include(raw: str | None) -> frozenset[str]:
    names = {part.strip() for part in (raw or "").split(",") if part.strip()}
    unknown = names - set(INCLUDES)
    if unknown:
        raise invalid("include", f"accepts {', '.join(INCLUDES)}, comma-separated")
    return frozenset(names)


async def _readable_type(conn: Conn, name: str, scopes: Collection[str]) -> ContentType:
    ctype = await type_store.get_type(conn, name)
    if ctype is None or not in_scope(ctype.name, scopes):
        raise NotFound("no such content type for this key")
    return ctype


async def expand(
    conn: Conn, rows: list[Entry], scopes: Collection[str], include: Collection[str] = ()
) -> list[dict[str, Any]]:
    """Delivered entries: a fixed handful of queries for the whole page."""
    if not rows:
        return []
    types = await type_store.list_types(conn)
    expander = Expander(scopes, {t.name: t.fields for t in types})
    await expander.load(conn, rows)
    items = [expander.entry(row) for row in rows]
    await attach_includes(conn, items, rows, include)
    return items


async def types(conn: Conn, scopes: Collection[str]) -> dict[str, Any]:
    rows = await type_store.list_types(conn)
    return {"data": [type_shape(r) for r in rows if in_scope(r.name, scopes)]}


async def entries(
    conn: Conn, scopes: Collection[str], type_name: str, query: ListQuery
) -> dict[str, Any]:
    ctype = await _readable_type(conn, type_name, scopes)
    rows, total = await entry_store.list_entries(
        conn,
        trashed=False,
        filters=EntryFilters(
            type=ctype.name, status="published", locale=query.locale, term=query.term
        ),
        sort=query.sort,
        limit=query.paging.limit,
        offset=query.paging.offset,
    )
    return page_body(await expand(conn, rows, scopes, query.include), query.paging, total)


async def _one(
    conn: Conn, row: Entry | None, scopes: Collection[str], include: Collection[str]
) -> dict[str, Any]:
    if row is None:
        raise NotFound("no such published entry")
    return (await expand(conn, [row], scopes, include))[0]


async def entry(
    conn: Conn,
    scopes: Collection[str],
    type_name: str,
    slug: str,
    locale: str | None,
    include: Collection[str],
) -> dict[str, Any]:
    ctype = await _readable_type(conn, type_name, scopes)
    row = await store.published_by_slug(conn, ctype.name, slug, locale)
    return await _one(conn, row, scopes, include)


async def single(
    conn: Conn, scopes: Collection[str], type_name: str, include: Collection[str]
) -> dict[str, Any]:
    ctype = await _readable_type(conn, type_name, scopes)
    if not ctype.single:
        raise NotFound("this content type is not single-kind", "NOT_SINGLE")
    return await _one(conn, await store.published_single(conn, ctype.name), scopes, include)


async def settings(conn: Conn) -> dict[str, Any]:
    return await delivery_settings(conn)


async def menu(conn: Conn, scopes: Collection[str], name: str) -> dict[str, Any]:
    row = await menu_store.get_menu(conn, name)
    if row is None:
        raise NotFound("no such menu")
    return {
        "name": row.name,
        "label": row.label,
        "items": await resolve_menu(conn, row.items, scopes),
    }


async def read_key(ctx: Context, cache: DeliveryCache, token: str) -> DeliveryKey:
    """The live delivery key ``token`` names (cached until the content version
    moves); its use is recorded at most every TOUCH_SECONDS per process."""
    token_hash = sha256_hex(token)
    key = cache.key(token_hash)
    if key is None:
        version = cache.version()
        async with ctx.db.connection() as conn:
            key = await key_store.delivery_key(conn, token_hash)
        if key is None:
            raise Unauthorized("unknown delivery key", "KEY_INVALID")
        if key.revoked_at is not None:
            raise Unauthorized("this delivery key was revoked", "KEY_REVOKED")
        cache.put_key(token_hash, key, version)
    if cache.due_touch(key.id, TOUCH_SECONDS):
        async with ctx.db.connection() as conn:
            await key_store.touch_delivery_key(conn, key.id, ctx.clock.now())
    return key


def encode(body: Any) -> Answer:
    # The same bytes json_response would send (common/web.py).
    return Answer.of(json_response(body).body)  # type: ignore[arg-type]


async def answer(
    ctx: Context, cache: DeliveryCache, cache_key: Hashable, key: DeliveryKey, question: Question
) -> Answer:
    """The cached answer under ``cache_key``, or ``question`` asked afresh and kept."""
    found = cache.get(cache_key)
    if found is None:
        version = cache.version()
        async with ctx.db.connection() as conn:
            found = encode(await question(conn, key))
        cache.put(cache_key, found, version)
    return found


async def preview(ctx: Context, scopes: Collection[str], token: str) -> dict[str, Any]:
    """The entry a live preview token shows, at any status (with ``status``)."""
    row = await preview_service.read(ctx, token)
    if not in_scope(row.type_name, scopes):
        raise NotFound("this preview link is unknown or has expired", "PREVIEW_EXPIRED")
    async with ctx.db.connection() as conn:
        entry = (await expand(conn, [row], scopes))[0]
    return {**entry, "status": row.status}
