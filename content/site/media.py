"""The two questions site settings ask the media library (content/media/).

Settings hold media ids (logo, socialImage). Both questions go through here
so the settings code does not change when the library's storage does:

- :func:`check_media_ids` on save: until the media library is merged it
  checks the id's shape (the media field's own rule, types/fields.py); with
  the library it also asks that the media exists and is an image.
- :func:`media_urls` on delivery: id -> public URL, which only the library
  (its storage driver and PUBLIC_URL / S3_PUBLIC_URL) can answer. Until it is
  merged there is no URL to give, and this says so rather than pretending no
  media exists (tests/content/test_site_settings.py marks the test that
  completes it).
"""

from __future__ import annotations

from collections.abc import Mapping

from common.db import Conn
from content.errors import Problems
from content.types.fields import MEDIA_ID_RE


async def check_media_ids(conn: Conn, ids: Mapping[str, str], p: Problems) -> None:
    """``ids`` maps a body key to the media id given for it; bad ones are named."""
    for key, media_id in ids.items():
        if not MEDIA_ID_RE.fullmatch(media_id):
            p.add(key, "must be a media id")


async def media_urls(conn: Conn, ids: list[str]) -> dict[str, str]:
    """Media id -> public URL, for delivery; answered by the media library."""
    raise NotImplementedError("media URLs come from the media library (content/media/)")
