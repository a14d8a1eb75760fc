"""What an entry change tells the world: the one mapping realtime and webhooks share.

A change notification (content/entries/service.py ``_changed``) carries the
action recorded in Activity (``entry.created``, ``entry.updated`` ...), the
entry's status after the change (``status``) and before it (``was``). The
action alone does not say whether what a website shows moved: an entry
created already published goes live, an edit of a live entry changes live
content, and a published entry sent back to draft leaves the site. So the
events of a change are its action, followed by the public event when there is
one and it differs. The realtime socket tells people every event and a
delivery key only the public one; a webhook gets one delivery per event it
takes (content/webhooks/events.py).
"""

from __future__ import annotations

from typing import Any

# The public events: all a delivery key ever hears (spec, Events).
PUBLISHED = "entry.published"
UNPUBLISHED = "entry.unpublished"
DELETED = "entry.deleted"


def public_event(change: dict[str, Any]) -> str | None:
    """The event a website hears for a change, or None when what it can read did not move.

    Any change leaving the entry live (going live, or edited while live) is
    ``entry.published``; leaving the live state (unpublished, back to draft)
    is ``entry.unpublished``; trashing a live entry is ``entry.deleted``.
    Purging an entry already in the trash changes nothing live, nor does any
    change to a draft.
    """
    action, status, was = change.get("event"), change.get("status"), change.get("was")
    if action == "entry.purged":
        return None
    if action == DELETED:
        return DELETED if status == "published" else None
    if status == "published":
        return PUBLISHED
    if was == "published":
        return UNPUBLISHED
    return None


def change_events(change: dict[str, Any]) -> tuple[str, ...]:
    """Every event an entry change fires: its action, then its public event if another."""
    action = change.get("event")
    if not isinstance(action, str) or not action.startswith("entry."):
        return ()
    public = public_event(change)
    if public is None or public == action:
        return (action,)
    return (action, public)
