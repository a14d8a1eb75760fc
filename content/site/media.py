"""The two questions site settings ask the media library (content/media/).

Settings hold media ids (logo, socialImage):

- :func:`check_media_ids` on save: each id names image media of the library
  (content/media/checks.py, the rule media and gallery fields follow too).
- :func:`media_urls` on delivery: id -> public URL, from the library (its
  storage driver decides the URL). A media deleted later reads as null.
"""

from __future__ import annotations

from collections.abc import Mapping

from common.db import Conn
from content.errors import Problems
from content.media.checks import check_images
from content.media.service import resolve_media_urls
from content.types.fields import MEDIA_ID_RE


async def check_media_ids(conn: Conn, ids: Mapping[str, str], p: Problems) -> None:
    """``ids`` maps a body key to the media id given for it; bad ones are named."""
    wellformed = [
        (key, media_id) for key, media_id in ids.items() if MEDIA_ID_RE.fullmatch(media_id)
    ]
    for key in ids.keys() - dict(wellformed).keys():
        p.add(key, "must be a media id")
    await check_images(conn, wellformed, p)


async def media_urls(conn: Conn, ids: list[str]) -> dict[str, str]:
    """Media id -> public URL, for delivery; ids of deleted media are absent."""
    return await resolve_media_urls(conn, ids)
