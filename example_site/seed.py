"""The example site's first-run data, in development only.

Written through the CMS's own checks and stores (types checked by
``clean_type``, data by ``checked_data``) in one transaction, recorded in
Activity by the system actor, as the scheduler's changes are. Runs when no
``page`` type exists yet, so a second start (or a site whose owner deleted
the examples) is left alone. The main menu is not created: the website
editor starts from the manifest's default links and creates it on first save.
"""

from __future__ import annotations

from common.ids import short_id
from content.auth.principal import Actor
from content.context import Context
from content.entries import store as entry_store
from content.entries.service import checked_data
from content.errors import Problems
from content.site import store as site_store
from content.types import store as type_store
from content.types.service import clean_type
from content.writes import write
from example_site.model import ENTRIES, TYPES

SEED_ACTOR = Actor(kind="system", name="example site")


async def seed(ctx: Context) -> bool:
    """Create the example content unless it is there; True when it was created."""
    async with write(ctx) as tx:
        conn = tx.conn
        if await type_store.get_type(conn, "page") is not None:
            return False
        types = {}
        for body in TYPES:
            values = clean_type(body, await type_store.type_names(conn), existing=None)
            row = await type_store.insert_type(conn, short_id(), values, tx.now)
            types[row.name] = row
            await tx.record(SEED_ACTOR, "type.created", "type", row.name, notify={"type": row.name})
        for type_name, title, slug, raw in ENTRIES:
            ctype = types[type_name]
            p = Problems()
            data = await checked_data(ctx, conn, raw, ctype, p)
            p.raise_if_any()
            entry_id = short_id()
            await entry_store.insert_entry(
                conn,
                entry_id=entry_id,
                type_id=ctype.id,
                slug=slug,
                title=title,
                data=data,
                status="published",
                locale="en",
                author_id=None,
                publish_at=None,
                published_at=tx.now,
                now=tx.now,
            )
            entry = await entry_store.get_entry(conn, entry_id)
            assert entry is not None
            await entry_store.insert_revision(conn, entry, SEED_ACTOR, "created", tx.now)
            notify = {"id": entry_id, "slug": slug, "type": type_name, "status": "published"}
            await tx.record(
                SEED_ACTOR,
                "entry.created",
                "entry",
                entry_id,
                {"title": title, "type": type_name, "status": "published"},
                notify={**notify, "was": "draft"},
            )
        await site_store.update_settings(
            conn, {"title": "Example site", "tagline": "Pages from the content service"}, tx.now
        )
        await tx.record(
            SEED_ACTOR,
            "settings.updated",
            "settings",
            "site",
            {"fields": ["tagline", "title"]},
            notify={"settings": "site"},
        )
    return True
