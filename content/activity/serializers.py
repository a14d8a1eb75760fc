"""The JSON shape of an activity record."""

from __future__ import annotations

from typing import Any


def activity_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "at": row["at"],
        "actor": {
            "kind": row["actor_kind"],
            "userId": row["user_id"],
            "keyId": row["key_id"],
            "name": row["actor_name"],
        },
        "action": row["action"],
        "subject": {"kind": row["subject_kind"], "id": row["subject_id"]},
        "summary": row["summary"],
    }
