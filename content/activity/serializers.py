"""The JSON shape of an activity record."""

from __future__ import annotations

from typing import Any

from content.activity.store import Activity


def activity_json(activity: Activity) -> dict[str, Any]:
    return {
        "id": activity.id,
        "at": activity.at,
        "actor": {
            "kind": activity.actor_kind,
            "userId": activity.user_id,
            "keyId": activity.key_id,
            "name": activity.actor_name,
        },
        "action": activity.action,
        "subject": {"kind": activity.subject_kind, "id": activity.subject_id},
        "summary": activity.summary,
    }
