"""Which changes webhooks hear, and the jobs a change enqueues in its own transaction.

Called by content/writes.py for every notified change: the delivery jobs
commit with the change or not at all, so no event is lost to a crash between
the commit and the send, and none is sent for a change rolled back. The events
of a change are content/entries/events.py's, the ones the realtime socket
sends: an entry created already published is ``entry.created`` and
``entry.published``, one delivery each to a webhook taking both.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from common.db import Conn
from common.ids import short_id
from common.jobs import enqueue
from content.entries.events import change_events
from content.webhooks import store

DELIVER_JOB = "content.webhook.deliver"
# Tries per delivery: the job queue's backoff (5 s, 10 s, 20 s ...) spreads
# them over about ten minutes before the delivery is marked dead.
MAX_ATTEMPTS = 8

ENTRY_EVENTS: tuple[str, ...] = (
    "entry.created",
    "entry.updated",
    "entry.published",
    "entry.unpublished",
    "entry.drafted",
    "entry.scheduled",
    "entry.deleted",
    "entry.restored",
    "entry.purged",
)
# What changes the site's look or behaviour beyond its entries (issue 26):
# a design override, a plugin enabled, disabled, configured or paused.
SITE_EVENTS: tuple[str, ...] = (
    "design.updated",
    "plugin.enabled",
    "plugin.disabled",
    "plugin.updated",
    "plugin.paused",
)
# Social posts and connections (issue 27): told to people on ``site``, never to keys.
SOCIAL_EVENTS: tuple[str, ...] = (
    "social.post.created",
    "social.post.updated",
    "social.post.scheduled",
    "social.post.cancelled",
    "social.post.published",
    "social.post.sent",
    "social.post.processing",
    "social.post.retrying",
    "social.post.failed",
    "social.post.deleted",
    "social.account.connected",
    "social.account.disconnected",
    "social.account.attention",
)
EVENTS: tuple[str, ...] = ENTRY_EVENTS + SITE_EVENTS + SOCIAL_EVENTS
_SITE_KEYS = ("design", "plugin", "socialPost", "socialAccount", "status")


def body(name: str, change: dict[str, Any], now: datetime) -> str:
    """The Standard Webhooks payload: {type, timestamp, data}; names the record, not its content.

    ``data`` is ``{id, slug, type, status}`` of an entry, ``{design}`` (the
    surface id) for a design override, ``{plugin}`` for a plugin,
    ``{socialPost, status}`` or ``{socialAccount}`` for social changes.
    """
    if name in SITE_EVENTS or name in SOCIAL_EVENTS:
        data = {k: v for k, v in change.items() if k in _SITE_KEYS}
    else:
        data = {k: change.get(k) for k in ("id", "slug", "type", "status")}
    return json.dumps(
        {"type": name, "timestamp": now.isoformat(), "data": data},
        separators=(",", ":"),
    )


def events_of(change: dict[str, Any]) -> tuple[str, ...]:
    """The events a change fires: a site or social change its own; an entry
    change its action and its public event (content/entries/events.py)."""
    name = change.get("event")
    if name in SITE_EVENTS or name in SOCIAL_EVENTS:
        return (str(name),)
    return change_events(change)


async def enqueue_deliveries(conn: Conn, change: dict[str, Any], now: datetime) -> None:
    for name in events_of(change):
        if name in EVENTS:
            await _enqueue_event(conn, name, change, now)


async def _enqueue_event(conn: Conn, name: str, change: dict[str, Any], now: datetime) -> None:
    webhook_ids = await store.subscribed_ids(conn, name)
    if not webhook_ids:
        return
    payload = body(name, change, now)
    for webhook_id in webhook_ids:
        # One message id per webhook and event, the same on every retry.
        await enqueue(
            conn,
            DELIVER_JOB,
            {
                "webhook": webhook_id,
                "message": f"msg_{short_id(12)}",
                "event": name,
                "body": payload,
            },
            run_at=now,
            max_attempts=MAX_ATTEMPTS,
        )
