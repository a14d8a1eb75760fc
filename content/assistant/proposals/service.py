"""Reviewing proposals: list, read, dismiss, and apply once, as the person.

Apply re-checks what may have moved since the proposal was made, and refuses
(changing nothing, the proposal marked refused with the reason) when

* the person can no longer apply it: every credential re-reads the user, so
  a demotion since shows here as a permission the role no longer has;
* the target changed: its JSON as its admin route shows it no longer has
  the digest recorded when the proposal was made (a stale diff).

Otherwise the tool's ``apply`` calls the service function the manual edit
route calls, as the person: validated, revisioned, recorded in Activity as
their change, with the usual realtime events and webhooks. A refusal by that
service for a reason the person can fix (a wrong password, say) leaves the
proposal pending; a permission refusal marks it refused. A key or secret the
change creates is in the answer this once and is not kept.
"""

from __future__ import annotations

from typing import Any

from content.assistant.proposals import store
from content.assistant.proposals.serializers import proposal_json
from content.assistant.proposals.store import Proposal
from content.assistant.tools.base import digest
from content.assistant.tools.registry import REGISTRY, argument_problems
from content.auth.principal import Principal
from content.context import Context
from content.errors import Conflict, ContentError, FieldError, Forbidden, NotFound, ValidationFailed
from content.http import Paging

STATUSES = ("pending", "applying", "applied", "dismissed", "refused")
# What a 403 from the service means when it is not a password to retype: the
# person may no longer do this (their role, rank, or the entry is not theirs).
_OUR_REFUSALS = ("PROPOSAL_NOT_PERMITTED", "PROPOSAL_STALE")
_RETRYABLE = ("PASSWORD_INCORRECT",)


async def list_proposals(
    ctx: Context,
    principal: Principal,
    *,
    conversation: str | None,
    status: str | None,
    paging: Paging,
) -> tuple[list[Proposal], int]:
    async with ctx.db.connection() as conn:
        return await store.list_for(
            conn,
            principal.user.id,
            conversation=conversation,
            status=status,
            limit=paging.limit,
            offset=paging.offset,
        )


async def get_proposal(ctx: Context, principal: Principal, proposal_id: str) -> Proposal:
    async with ctx.db.connection() as conn:
        found = await store.get(conn, proposal_id, principal.user.id)
    if found is None:
        raise NotFound("no such proposal")
    return found


def _decided(found: Proposal) -> Conflict:
    return Conflict(f"this proposal is already {found.status}", "PROPOSAL_DECIDED")


async def dismiss(ctx: Context, principal: Principal, proposal_id: str) -> Proposal:
    found = await get_proposal(ctx, principal, proposal_id)
    async with ctx.db.connection() as conn:
        done = await store.decide(
            conn, found.id, "dismissed", ctx.clock.now(), only_from=("pending",)
        )
    if done is None:
        raise _decided(await get_proposal(ctx, principal, proposal_id))
    return done


async def _refuse(ctx: Context, found: Proposal, reason: str) -> None:
    async with ctx.db.connection() as conn:
        await store.decide(conn, found.id, "refused", ctx.clock.now(), refusal=reason)


async def _release(ctx: Context, found: Proposal) -> None:
    async with ctx.db.connection() as conn:
        await store.decide(conn, found.id, "pending", None)


async def _check_still_applicable(ctx: Context, principal: Principal, found: Proposal) -> None:
    tool = REGISTRY.tools[found.tool]
    missing = [n for n in found.needs if not principal.can(n)]
    if missing:
        reason = (
            f"you can no longer apply this: the {principal.user.role} role does not have"
            f" {', '.join(missing)}"
        )
        await _refuse(ctx, found, reason)
        raise Forbidden(reason, "PROPOSAL_NOT_PERMITTED", {"permissions": missing})
    if found.target_version is None or tool.current is None or found.target_id is None:
        return
    now = await tool.current(ctx, principal, found.target_id)
    if now is None or digest(now) != found.target_version:
        what = "was removed" if now is None else "changed"
        reason = f"the {found.target_kind} {what} since this proposal was made; ask again"
        await _refuse(ctx, found, reason)
        raise Conflict(reason, "PROPOSAL_STALE")


def _result_id(result: Any) -> str | None:
    if isinstance(result, dict):
        for key in ("id", "name", "network"):
            if isinstance(result.get(key), str):
                return str(result[key])
    return None


async def apply(
    ctx: Context, principal: Principal, proposal_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Apply a pending proposal once; ``body`` holds only what the person adds
    (a pasted client secret, their password), never what the model wrote."""
    found = await get_proposal(ctx, principal, proposal_id)
    tool = REGISTRY.tools[found.tool]
    problems = argument_problems(tool.apply_body, body)
    if problems:
        raise ValidationFailed([FieldError("body", p) for p in problems])
    if found.status != "pending":
        raise _decided(found)
    async with ctx.db.connection() as conn:
        claimed = await store.claim(conn, found.id, principal.user.id)
    if claimed is None:
        raise _decided(await get_proposal(ctx, principal, proposal_id))
    try:
        await _check_still_applicable(ctx, principal, claimed)
        assert tool.apply is not None
        applied = await tool.apply(ctx, principal, claimed.arguments, claimed.target_id, body)
    except ContentError as exc:
        if exc.code in _OUR_REFUSALS:
            pass  # marked refused already
        elif exc.status == 403 and exc.code not in _RETRYABLE:
            await _refuse(ctx, claimed, exc.message)
        else:
            await _release(ctx, claimed)
        raise
    except BaseException:
        await _release(ctx, claimed)
        raise
    async with ctx.db.connection() as conn:
        done = await store.decide(
            conn, claimed.id, "applied", ctx.clock.now(), result_id=_result_id(applied.result)
        )
    assert done is not None
    answer: dict[str, Any] = {"proposal": proposal_json(done), "result": applied.result}
    if applied.secret is not None:
        # Shown this once, to the person applying; never stored, never in the conversation.
        answer["secret"] = applied.secret
    return answer
