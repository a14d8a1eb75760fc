"""Preview links: a snapshot of one entry, unsaved changes included, served by token.

Creating one saves and publishes nothing. Snapshots live in PostgreSQL (an
UNLOGGED table) so every gateway process serves them; limits as the spec:
at most one hour, 100 snapshots, 16 MiB in all and 1 MiB each (oldest
evicted first, an oversized one refused with 413 PREVIEW_TOO_LARGE).
Trashing or purging the source entry invalidates its previews, and each
process clears them when the service starts (docs/content.md, "Preview").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from common.crypto import sha256_hex
from common.ids import random_id
from content.auth.principal import Principal
from content.context import Context
from content.entries import store as entry_store
from content.entries.service import checked_data, ensure_can_edit, merge_data
from content.entries.store import Entry
from content.entries.validation import check_slug, check_title
from content.errors import ContentError, NotFound, Problems
from content.preview import store
from content.types import store as type_store
from content.types.service import fill_preview_url

LIFETIME = timedelta(hours=1)
MAX_SNAPSHOTS = 100
MAX_TOTAL_BYTES = 16 << 20
MAX_SNAPSHOT_BYTES = 1 << 20
BODY_KEYS = {"title", "slug", "data"}
# The Entry columns a snapshot keeps; datetimes as ISO 8601.
_MOMENTS = ("published_at", "publish_at", "created_at", "updated_at", "deleted_at")


@dataclass(frozen=True)
class PreviewLink:
    token: str
    expires_at: datetime
    url: str
    site_url: str | None


def snapshot_of(entry: Entry) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in entry.__dict__.items():
        out[name] = value.isoformat() if isinstance(value, datetime) else value
    return out


def entry_of(snapshot: dict[str, Any]) -> Entry:
    values = dict(snapshot)
    for name in _MOMENTS:
        if values.get(name) is not None:
            values[name] = datetime.fromisoformat(values[name])
    return Entry(**values)


async def create(
    ctx: Context, actor: Principal, entry_id: str, body: dict[str, Any]
) -> PreviewLink:
    p = Problems()
    for key in sorted(set(body) - BODY_KEYS):
        p.add(key, "is not previewable; send title, slug and data")
    now = ctx.clock.now()
    async with ctx.db.transaction() as conn:
        entry = await entry_store.get_entry(conn, entry_id)
        if entry is None:
            raise NotFound("no such entry")
        ensure_can_edit(actor, entry)
        ctype = await type_store.get_type_by_id(conn, entry.type_id)
        assert ctype is not None
        shown = entry
        if body.get("title") is not None:
            shown = _replace(shown, title=check_title(body["title"], p))
        if body.get("slug") is not None:
            shown = _replace(shown, slug=check_slug(body["slug"], p))
        if body.get("data") is not None:
            if not isinstance(body["data"], dict):
                p.add("data", "must be an object")
            else:
                # As a PATCH would merge and check it, without saving.
                merged = merge_data(entry, ctype, body["data"])
                shown = _replace(shown, data=await checked_data(ctx, conn, merged, ctype, p))
        p.raise_if_any()
        snapshot = snapshot_of(shown)
        size = len(json.dumps(snapshot, separators=(",", ":")).encode())
        if size > MAX_SNAPSHOT_BYTES:
            raise ContentError(
                413,
                "PREVIEW_TOO_LARGE",
                f"a preview holds at most {MAX_SNAPSHOT_BYTES} bytes; this one is {size}",
            )
        await store.make_room(conn, now, size, most=MAX_SNAPSHOTS, total=MAX_TOTAL_BYTES)
        token = random_id()
        expires_at = now + LIFETIME
        await store.insert(conn, sha256_hex(token), entry.id, snapshot, size, now, expires_at)
    public = ctx.runtime.settings.public_url.rstrip("/")
    site_url = None
    if ctype.preview_url:
        values = {"slug": shown.slug, "id": shown.id, "locale": shown.locale, "type": ctype.name}
        page = fill_preview_url(ctype.preview_url, values)
        site_url = f"{page}{'&' if '?' in page else '?'}preview={token}"
    return PreviewLink(token, expires_at, f"{public}{ctx.prefix}/preview/{token}", site_url)


def _replace(entry: Entry, **changes: Any) -> Entry:
    return Entry(**{**entry.__dict__, **changes})


async def read(ctx: Context, token: str) -> Entry:
    """The entry a live token shows, at whatever status it had."""
    async with ctx.db.connection() as conn:
        found = await store.live(conn, sha256_hex(token), ctx.clock.now())
    if found is None:
        raise NotFound("this preview link is unknown or has expired", "PREVIEW_EXPIRED")
    return entry_of(found.snapshot)
