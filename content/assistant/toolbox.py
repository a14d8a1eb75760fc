"""The interface between the conversation loop and the assistant's tools.

The loop asks ``specs()`` for the tools to offer the model (filtered to what the
person's role could apply) and hands each tool call to ``call()``; what comes
back is what the model is told (``content``), the proposal the admin renders,
the screen ``open_screen`` moves to, or why the arguments were refused.
The implementation is content/assistant/tools/ (``TOOLBOX``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from content.auth.principal import Principal
from content.context import Context


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema object


@dataclass(frozen=True)
class ToolOutcome:
    # JSON-able, what the model is told (a read's result, or "proposal p_… created",
    # or the validation error).
    content: Any
    # The proposal record as the API returns it.
    proposal: dict[str, Any] | None = None
    # open_screen's target, e.g. {"path": "/cms/admin/entries/…"}.
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
