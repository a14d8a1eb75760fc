"""The second hosted provider (kind ``anthropic``): the Messages API, streamed, through the anthropic SDK.

Wire format: server-sent events ``message_start`` (input tokens),
``content_block_start`` (a text block, or a ``tool_use`` block with its id and
name), ``content_block_delta`` (``text_delta``, or ``input_json_delta`` whose
``partial_json`` pieces make up that block's input), ``content_block_stop``,
``message_delta`` (output tokens) and ``message_stop``. The pieces are joined
per content block index and parsed at the block's stop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

import anthropic
from anthropic import types

from content.assistant.providers import transport
from content.assistant.providers.base import (
    CONNECT_SECONDS,
    DEFAULT_URLS,
    TIMEOUT_SECONDS,
    Connection,
    Event,
    ProviderError,
    TextDelta,
    ToolCall,
    Usage,
    parse_arguments,
    sdk_error,
)
from content.assistant.toolbox import ToolSpec


def messages_for(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Neutral messages as Anthropic's: tool results are user turns, merged when adjacent."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "user":
            block: dict[str, Any] = {"type": "text", "text": m["text"]}
            role = "user"
            blocks = [block]
        elif m["role"] == "assistant":
            role = "assistant"
            blocks = [{"type": "text", "text": m["text"]}] if m.get("text") else []
            blocks += [
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
                for c in m.get("toolCalls") or ()
            ]
        else:
            role = "user"
            blocks = [
                {"type": "tool_result", "tool_use_id": m["toolCallId"], "content": m["content"]}
            ]
        if not blocks:
            continue  # an empty answer (the stream failed): Anthropic refuses empty content
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _error(exc: Exception) -> ProviderError:
    return sdk_error(exc, anthropic.APIStatusError, anthropic.APIConnectionError)


async def stream(
    connection: Connection,
    system: str,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[ToolSpec],
    *,
    max_tokens: int,
) -> AsyncIterator[Event]:
    guard = transport.Guard(connection.kind, allow_private=connection.allow_private)
    timeout = anthropic.Timeout(TIMEOUT_SECONDS, connect=CONNECT_SECONDS)
    client = anthropic.AsyncAnthropic(
        api_key=connection.credential or "",
        base_url=connection.base_url or DEFAULT_URLS["anthropic"],
        max_retries=0,
        timeout=timeout,
        # Connects only to addresses the SSRF rule allows, judged at connect (transport.py).
        http_client=guard.sdk_client(timeout),
    )
    blocks: dict[int, dict[str, str]] = {}
    tokens_in = tokens_out = 0
    try:
        specs = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in tools
        ]
        events = await client.messages.create(
            model=connection.model,
            max_tokens=max_tokens,
            system=system,
            messages=cast(Any, messages_for(messages)),
            stream=True,
            tools=cast(Any, specs) if specs else anthropic.omit,
        )
        async for event in events:
            if isinstance(event, types.RawMessageStartEvent):
                tokens_in = event.message.usage.input_tokens or 0
                tokens_out = event.message.usage.output_tokens or 0
            elif isinstance(event, types.RawContentBlockStartEvent):
                start = event.content_block
                if isinstance(start, types.ToolUseBlock):
                    blocks[event.index] = {"id": start.id, "name": start.name, "json": ""}
                elif isinstance(start, types.TextBlock) and start.text:
                    yield TextDelta(start.text)
            elif isinstance(event, types.RawContentBlockDeltaEvent):
                delta = event.delta
                if isinstance(delta, types.TextDelta):
                    yield TextDelta(delta.text)
                elif isinstance(delta, types.InputJSONDelta) and event.index in blocks:
                    blocks[event.index]["json"] += delta.partial_json
            elif isinstance(event, types.RawContentBlockStopEvent) and event.index in blocks:
                block = blocks.pop(event.index)
                arguments, malformed = parse_arguments(block["json"])
                yield ToolCall(block["id"], block["name"], arguments, malformed)
            elif isinstance(event, types.RawMessageDeltaEvent):
                tokens_out = event.usage.output_tokens or tokens_out
    except anthropic.AnthropicError as exc:
        raise guard.refused() or _error(exc) from None
    finally:
        await client.close()
    yield Usage(tokens_in, tokens_out)
