"""The activity log as people read it: who may see which subjects."""

from __future__ import annotations

from content.activity import store
from content.activity.store import Activity
from content.auth.principal import Principal
from content.context import Context
from content.http import Paging

# What anyone who reads content may see; the rest (people, keys) needs users.manage.
CONTENT_SUBJECTS = ["entry", "type", "taxonomy", "term", "menu", "settings", "design"]


async def list_activity(
    ctx: Context,
    reader: Principal,
    paging: Paging,
    *,
    subject_kind: str | None,
    subject_id: str | None,
    user_id: str | None,
) -> tuple[list[Activity], int]:
    """Newest first, narrowed to the subjects ``reader`` may see."""
    kinds = None if reader.can("users.manage") else CONTENT_SUBJECTS
    async with ctx.db.connection() as conn:
        return await store.list_activity(
            conn,
            kinds=kinds,
            subject_kind=subject_kind,
            subject_id=subject_id,
            user_id=user_id,
            limit=paging.limit,
            offset=paging.offset,
        )
