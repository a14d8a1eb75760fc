"""The JSON of a proposal (docs/content.md, "Assistant tools and proposals")."""

from __future__ import annotations

from typing import Any

from content.assistant.proposals.store import Proposal


def proposal_json(p: Proposal) -> dict[str, Any]:
    return {
        "id": p.id,
        "conversationId": p.conversation_id,
        "userId": p.user_id,
        "tool": p.tool,
        "target": {"kind": p.target_kind, "id": p.target_id},
        "arguments": p.arguments,
        "diff": p.diff,
        "needs": p.needs,
        "recoverable": p.recoverable,
        "targetVersion": p.target_version,
        "targetUpdatedAt": p.target_updated,
        "status": p.status,
        "refusal": p.refusal,
        "resultId": p.result_id,
        "createdAt": p.created_at,
        "decidedAt": p.decided_at,
    }
