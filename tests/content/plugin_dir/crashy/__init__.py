"""A sample plugin whose hook raises: it is paused, and the change still stands."""

from __future__ import annotations

from content.plugins import HookEvent, Plugin, PluginContext


async def explode(event: HookEvent, ctx: PluginContext) -> None:
    raise RuntimeError(f"crashy cannot cope with {event.name}")


plugin = Plugin(name="crashy", version="0.1.0", hooks={"entry.created": explode})
