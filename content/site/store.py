"""SQL for content.site_settings: one row, created by the migration."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict

from common.db import Conn, execute, fetch_one
from common.records import Record

_COLUMNS = "title, tagline, description, logo, social_image, updated_at"


@dataclass(frozen=True)
class SiteSettings(Record):
    """The row of content.site_settings."""

    title: str
    tagline: str
    description: str
    # Media ids (content/media/), resolved to URLs on delivery (site/media.py).
    logo: str | None
    social_image: str | None
    updated_at: datetime


class SettingsChanges(TypedDict, total=False):
    """The columns a PATCH sets; those left out keep their value."""

    title: str
    tagline: str
    description: str
    logo: str | None
    social_image: str | None


async def get_settings(conn: Conn, *, lock: bool = False) -> SiteSettings:
    suffix = " FOR UPDATE" if lock else ""
    row = await fetch_one(conn, f"SELECT {_COLUMNS} FROM content.site_settings{suffix}")
    assert row is not None, "migration 0010 inserts the settings row"
    return SiteSettings.from_row(row)


async def update_settings(conn: Conn, changes: SettingsChanges, now: datetime) -> None:
    params: dict[str, Any] = {**changes, "now": now}
    sets = [f"{column} = %({column})s" for column in changes]
    await execute(
        conn,
        f"UPDATE content.site_settings SET {', '.join([*sets, 'updated_at = %(now)s'])}",
        params,
    )
