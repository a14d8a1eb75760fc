"""The optional social plugin hook (spec, Social routes rules).

A planning plugin keeps its own plans; a plan's ``publishPostId`` points at a
core social post. The core schedules, sends, retries and records outcomes;
the plugin hears every change of a post as a hook (``social.post.*``, with
``data = {socialPost, status}``) and mirrors what :func:`outcome` says::

    async def mirrored(event: HookEvent, ctx: PluginContext) -> None:
        post = await outcome(ctx.db, event.data["socialPost"])
        ...  # store post["status"] and each target's error on the plan

    plugin = Plugin(name="planner", version="1",
                    hooks={"social.post.sent": mirrored, "social.post.failed": mirrored})
"""

from __future__ import annotations

from typing import Any

from common.db import Database
from content.social import service, store
from content.webhooks.events import SOCIAL_EVENTS

# The post events a plugin may hook (account events stay with admins).
POST_HOOK_EVENTS: tuple[str, ...] = tuple(e for e in SOCIAL_EVENTS if e.startswith("social.post."))


async def outcome(db: Database, post_id: str) -> dict[str, Any] | None:
    """The core post as the admin API shows it (status, schedule, every target's
    outcome and the network's own error text), or None once deleted."""
    async with db.connection() as conn:
        row = await store.post(conn, post_id)
        if row is None:
            return None
        return (await service.posts_json(conn, [row]))[0]
