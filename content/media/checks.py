"""The one rule for a media id held by another record: it names image media of the library.

Entries (media and gallery fields) and site settings (logo, socialImage) ask
it on save, for all their ids in one query that locks the rows FOR SHARE, so
a save and the media's deletion cannot both commit.
"""

from __future__ import annotations

from collections.abc import Sequence

from common.db import Conn
from content.errors import Problems
from content.media import store


async def check_images(conn: Conn, held: Sequence[tuple[str, str]], p: Problems) -> None:
    """``held``: (path, media id) pairs; each bad one is named by its path."""
    if not held:
        return
    found = await store.media_by_ids(conn, sorted({media_id for _, media_id in held}), share=True)
    for path, media_id in held:
        media = found.get(media_id)
        if media is None:
            p.add(path, f"no media {media_id!r} exists")
        elif not media.is_image:
            p.add(path, f"must be an image, not {media.type} ({media.filename})")
