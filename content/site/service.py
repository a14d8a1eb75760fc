"""Site settings: title, tagline, description, logo and social image.

Read with content.read, changed with settings.manage. There is one settings
record, created by the migration; a PATCH changes the keys it names. The
logo and social image are media ids (or null), checked on save and resolved
to URLs for delivery (:func:`delivery_settings`, through site/media.py).
"""

from __future__ import annotations

from typing import Any

from common.db import Conn
from content.auth.principal import Principal
from content.context import Context
from content.errors import Problems
from content.site import media, store
from content.site.store import SettingsChanges, SiteSettings
from content.writes import write

# Body key -> (column, longest value) for the text settings.
TEXT_KEYS = {
    "title": ("title", 200),
    "tagline": ("tagline", 300),
    "description": ("description", 2000),
}
MEDIA_KEYS = {"logo": "logo", "socialImage": "social_image"}


async def get_settings(ctx: Context) -> SiteSettings:
    async with ctx.db.connection() as conn:
        return await store.get_settings(conn)


async def _clean(conn: Conn, body: dict[str, Any]) -> SettingsChanges:
    p = Problems()
    for key in sorted(set(body) - set(TEXT_KEYS) - set(MEDIA_KEYS)):
        p.add(key, "is not a site setting")
    changes: dict[str, Any] = {}
    for key, (column, longest) in TEXT_KEYS.items():
        if key not in body:
            continue
        value = "" if body[key] is None else body[key]
        if not isinstance(value, str) or len(value) > longest:
            p.add(key, f"must be a string of at most {longest} characters")
        else:
            changes[column] = value.strip()
    ids: dict[str, str] = {}
    for key, column in MEDIA_KEYS.items():
        if key not in body:
            continue
        value = body[key]
        if value is not None and not (isinstance(value, str) and value):
            p.add(key, "must be a media id or null")
            continue
        changes[column] = value
        if value is not None:
            ids[key] = value
    await media.check_media_ids(conn, ids, p)
    p.raise_if_any()
    return SettingsChanges(**changes)  # type: ignore[typeddict-item]


async def update_settings(ctx: Context, actor: Principal, body: dict[str, Any]) -> SiteSettings:
    async with write(ctx) as tx:
        existing = await store.get_settings(tx.conn, lock=True)
        changes = await _clean(tx.conn, body)
        changed = SettingsChanges(
            **{k: v for k, v in changes.items() if getattr(existing, k) != v}  # type: ignore[typeddict-item]
        )
        if not changed:
            return existing
        await store.update_settings(tx.conn, changed, tx.now)
        keys = {column: key for key, column in MEDIA_KEYS.items()}
        summary = {"fields": sorted(keys.get(column, column) for column in changed)}
        await tx.record(
            actor.actor(),
            "settings.updated",
            "settings",
            "site",
            summary,
            notify={"settings": "site"},
        )
        return await store.get_settings(tx.conn)


async def delivery_settings(conn: Conn) -> dict[str, Any]:
    """What GET /site/settings serves: the settings with media ids resolved to URLs.

    A media id the library no longer knows (deleted media) reads as null.
    """
    row = await store.get_settings(conn)
    ids = [i for i in (row.logo, row.social_image) if i]
    urls = await media.media_urls(conn, ids) if ids else {}
    return {
        "title": row.title,
        "tagline": row.tagline,
        "description": row.description,
        "logo": urls.get(row.logo) if row.logo else None,
        "socialImage": urls.get(row.social_image) if row.social_image else None,
    }
