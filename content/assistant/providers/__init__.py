"""Model providers: one neutral streaming interface over each provider's official SDK.

The chat loop, the field assistant and the bubble speak in neutral messages
(dicts, kept as they are in assistant_messages)::

    {"role": "user", "text": "..."}
    {"role": "assistant", "text": "...", "toolCalls": [{"id", "name", "arguments"}]}
    {"role": "tool", "toolCallId": "...", "name": "...", "content": "<json text>"}

and hear back :class:`TextDelta`, whole :class:`ToolCall` s (each SDK's
fragments joined here, per provider) and one :class:`Usage` from the
provider's own usage fields. Every failure is a :class:`ProviderError` naming
its kind, so the person reads what went wrong, whichever provider it was.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from content.assistant.providers.base import (
    CONNECT_SECONDS,
    DEFAULT_URLS,
    KINDS,
    TIMEOUT_SECONDS,
    URL_KINDS,
    WITHHELD,
    Connection,
    ErrorKind,
    Event,
    Kind,
    ProviderError,
    TextDelta,
    ToolCall,
    Usage,
    parse_arguments,
    redact,
    retry_after,
    scrub,
    status_kind,
)
from content.assistant.toolbox import ToolSpec

__all__ = [
    "CONNECT_SECONDS",
    "DEFAULT_URLS",
    "KINDS",
    "TIMEOUT_SECONDS",
    "URL_KINDS",
    "WITHHELD",
    "Connection",
    "ErrorKind",
    "Event",
    "Kind",
    "ProviderError",
    "TextDelta",
    "ToolCall",
    "Usage",
    "parse_arguments",
    "redact",
    "retry_after",
    "scrub",
    "status_kind",
    "stream",
]

# One module per provider kind; both Ollama kinds speak the same API. Each is
# imported on its first call: the three SDKs take seconds to import, and a
# process that never calls one should not pay for them at start.
MODULES = {
    "openai": "content.assistant.providers.openai_chat",
    "anthropic": "content.assistant.providers.anthropic_messages",
    "ollama": "content.assistant.providers.ollama_chat",
    "ollama-cloud": "content.assistant.providers.ollama_chat",
}


async def stream(
    connection: Connection,
    system: str,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[ToolSpec] = (),
    *,
    max_tokens: int = 2048,
) -> AsyncIterator[Event]:
    """Stream one model turn through the kind's official SDK."""
    name = MODULES.get(connection.kind)
    if name is None:
        raise ProviderError("bad_request", f"unknown provider kind {connection.kind}")
    module = importlib.import_module(name)
    # Whatever the person typed or a tool returned, no secret is sent (spec, Assistant tools).
    clean = [scrub(m, connection.credential) for m in messages]
    system = scrub(system, connection.credential)
    async for event in module.stream(connection, system, clean, tools, max_tokens=max_tokens):
        yield event
