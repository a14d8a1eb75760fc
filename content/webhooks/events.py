"""Which changes webhooks hear, and the jobs a change enqueues in its own transaction.

Called by content/writes.py for every notified change: the delivery jobs
commit with the change or not at all, so no event is lost to a crash between
the commit and the send, and none is sent for a change rolled back.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from common.db import Conn
from common.ids import short_id
from common.jobs import enqueue
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


def body(event: dict[str, Any], now: datetime) -> str:
    """The Standard Webhooks payload: {type, timestamp, data}; names the record, not its content.

    ``data`` is ``{id, slug, type, status}`` of an entry, ``{design}`` (the
    surface id) for a design override, ``{plugin}`` for a plugin,
    ``{socialPost, status}`` or ``{socialAccount}`` for social changes.
    """
    if event["event"] in SITE_EVENTS or event["event"] in SOCIAL_EVENTS:
        data = {k: v for k, v in event.items() if k in _SITE_KEYS}
    else:
        data = {k: event.get(k) for k in ("id", "slug", "type", "status")}
    return json.dumps(
        {"type": event["event"], "timestamp": now.isoformat(), "data": data},
        separators=(",", ":"),
    )


async def enqueue_deliveries(conn: Conn, event: dict[str, Any], now: datetime) -> None:
    name = event.get("event")
    if name not in EVENTS:
        return
    webhook_ids = await store.subscribed_ids(conn, name)
    if not webhook_ids:
        return
    payload = body(event, now)
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
