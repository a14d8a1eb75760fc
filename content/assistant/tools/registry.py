"""The forty-five tools and the :class:`Registry` the conversation loop calls.

``specs()`` offers a tool when the person's role could apply it (its
permission; get_page_layout only when visual pages are connected). ``call()``
checks the arguments against the tool's JSON Schema, then runs a read, moves
the admin (open_screen) or drafts a proposal and stores it: nothing is
written to the site by a tool call.
"""

from __future__ import annotations

import copy
from typing import Any

from jsonschema import Draft202012Validator

from common.ids import short_id
from content.assistant.proposals import store
from content.assistant.proposals.serializers import proposal_json
from content.assistant.toolbox import ToolOutcome, ToolSpec
from content.assistant.tools import (
    entries,
    media,
    menus,
    people,
    plugins,
    screen,
    site,
    social,
    taxonomies,
    types,
)
from content.assistant.tools.base import Args, Draft, Refused, Tool, digest, refused_by
from content.auth.principal import Principal
from content.context import Context
from content.errors import ContentError

ALL: tuple[Tool, ...] = (
    *types.TOOLS,
    *entries.TOOLS,
    *media.TOOLS,
    *taxonomies.TOOLS,
    *site.TOOLS,
    *menus.TOOLS,
    *plugins.TOOLS,
    *people.TOOLS,
    *social.TOOLS,
    screen.TOOL,
)


def visual_connected(ctx: Context) -> bool:
    """True when the host passed visual page definitions (get_page_layout is offered)."""
    return ctx.visual is not None and bool(ctx.visual.definitions)


def argument_problems(schema: dict[str, Any], arguments: Any) -> list[str]:
    """Each way ``arguments`` break ``schema``, named by where (``data.title: ...``)."""
    validator = Draft202012Validator(schema)
    out = []
    for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.path)
        out.append(f"{where}: {error.message}" if where else error.message)
    return out


class Registry:
    def __init__(self, tools: tuple[Tool, ...]) -> None:
        self.tools = {t.name: t for t in tools}
        for tool in tools:
            Draft202012Validator.check_schema(tool.parameters)

    def offered(self, principal: Principal, tool: Tool, *, visual: bool) -> bool:
        return principal.can(tool.permission) and (visual or not tool.visual_only)

    def specs(
        self, ctx: Context, principal: Principal, *, visual_connected: bool
    ) -> list[ToolSpec]:
        return [
            ToolSpec(t.name, t.description, copy.deepcopy(t.parameters))
            for t in self.tools.values()
            if self.offered(principal, t, visual=visual_connected)
        ]

    async def call(
        self,
        ctx: Context,
        principal: Principal,
        conversation_id: str,
        name: str,
        arguments: dict[str, Any],
    ) -> ToolOutcome:
        tool = self.tools.get(name)
        if tool is None or not self.offered(principal, tool, visual=visual_connected(ctx)):
            return _refused(f"no tool named {name!r} is available to you")
        problems = argument_problems(tool.parameters, arguments)
        if problems:
            return _refused("the arguments were refused: " + "; ".join(problems))
        try:
            if tool.kind == "read":
                assert tool.run is not None
                return ToolOutcome(await tool.run(ctx, principal, arguments))
            if tool.kind == "move":
                assert tool.run is not None
                target = await tool.run(ctx, principal, arguments)
                return ToolOutcome({"opened": target["path"]}, screen=target)
            assert tool.draft is not None
            draft = await tool.draft(ctx, principal, arguments)
        except Refused as exc:
            return _refused(exc.message)
        except ContentError as exc:
            return _refused(refused_by(exc).message)
        record = await _store(ctx, principal, conversation_id, tool, arguments, draft)
        proposal = proposal_json(record)
        told = {
            "proposal": record.id,
            "status": "pending",
            "message": f"proposal {record.id} created; the person reviews the change and"
            " applies or dismisses it",
            "diff": record.diff,
        }
        return ToolOutcome(told, proposal=proposal)


async def _store(
    ctx: Context,
    principal: Principal,
    conversation_id: str,
    tool: Tool,
    arguments: Args,
    draft: Draft,
) -> store.Proposal:
    before = draft.before
    values = {
        "id": f"p_{short_id()}",
        "conversation_id": conversation_id,
        "user_id": principal.user.id,
        "tool": tool.name,
        "target_kind": draft.target.kind,
        "target_id": draft.target.id,
        "arguments": draft.arguments if draft.arguments is not None else arguments,
        "diff": draft.diff,
        "needs": list(dict.fromkeys((tool.permission, *draft.needs))),
        "recoverable": draft.recoverable,
        "target_version": digest(before) if before is not None else None,
        "target_updated": before.get("updatedAt") if before is not None else None,
    }
    async with ctx.db.connection() as conn:
        return await store.insert(conn, values, ctx.clock.now())


def _refused(message: str) -> ToolOutcome:
    return ToolOutcome({"error": message}, error=message)


REGISTRY = Registry(ALL)
