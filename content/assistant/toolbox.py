"""The interface between the chat loop and the tools (content/assistant/tools/).

The chat loop (conversations/service.py) only knows this Protocol: which tools
a person may be offered (``specs``) and how one call is answered (``call``).
No tool writes: a propose tool answers with a proposal record the admin shows
as a diff, ``open_screen`` with a screen to move to. The real toolbox lives in
``content.assistant.tools`` as ``TOOLBOX``; :func:`default_toolbox` falls back
to an empty one while that package is absent, so the assistant still talks.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from content.auth.principal import Principal
    from content.context import Context


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # a JSON Schema object


@dataclass(frozen=True)
class ToolOutcome:
    # What the model is told: a read's result, "proposal p_... created", or why it was refused.
    content: Any
    # The proposal record as the API returns it (shown in the tray).
    proposal: dict[str, Any] | None = None
    # open_screen's target, e.g. {"path": "/cms/admin/entries/..."}.
    screen: dict[str, Any] | None = None
    # Set when the arguments were refused; the model is told why and may retry.
    error: str | None = None


class Toolbox(Protocol):
    def specs(
        self, ctx: Context, principal: Principal, *, visual_connected: bool
    ) -> list[ToolSpec]: ...

    async def call(
        self,
        ctx: Context,
        principal: Principal,
        conversation_id: str,
        name: str,
        arguments: dict[str, Any],
    ) -> ToolOutcome: ...


class EmptyToolbox:
    """No tools: the assistant answers in words only."""

    def specs(
        self, ctx: Context, principal: Principal, *, visual_connected: bool
    ) -> list[ToolSpec]:
        return []

    async def call(
        self,
        ctx: Context,
        principal: Principal,
        conversation_id: str,
        name: str,
        arguments: dict[str, Any],
    ) -> ToolOutcome:
        return ToolOutcome(content=None, error=f"there is no tool named {name}")


def default_toolbox() -> Toolbox:
    """content.assistant.tools.TOOLBOX when that package is installed, else no tools."""
    try:
        module = importlib.import_module("content.assistant.tools")
    except ModuleNotFoundError as exc:
        if exc.name not in ("content.assistant.tools",):
            raise
        return EmptyToolbox()
    toolbox: Toolbox = module.TOOLBOX
    return toolbox
