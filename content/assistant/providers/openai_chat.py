"""The hosted provider (kind ``openai``): OpenAI chat completions, streamed, through the openai SDK.

Wire format: server-sent events of ``chat.completion.chunk``; a tool call's
``function.arguments`` arrive in fragments, each tagged with the call's
``index``, joined here per index and parsed once the stream ends. Usage comes
in the last chunk (``stream_options.include_usage``). Any OpenAI-compatible
server works: the base URL is the admin's (https://api.openai.com/v1 by default).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

import openai

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


def messages_for(system: str, messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for m in messages:
        if m["role"] == "user":
            out.append({"role": "user", "content": m["text"]})
        elif m["role"] == "assistant":
            item: dict[str, Any] = {"role": "assistant", "content": m.get("text") or None}
            if m.get("toolCalls"):
                item["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                    }
                    for c in m["toolCalls"]
                ]
            out.append(item)
        else:
            out.append({"role": "tool", "tool_call_id": m["toolCallId"], "content": m["content"]})
    return out


def tools_for(tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def _error(exc: Exception) -> ProviderError:
    return sdk_error(exc, openai.APIStatusError, openai.APIConnectionError)


async def stream(
    connection: Connection,
    system: str,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[ToolSpec],
    *,
    max_tokens: int,
) -> AsyncIterator[Event]:
    guard = transport.Guard(connection.kind, allow_private=connection.allow_private)
    timeout = openai.Timeout(TIMEOUT_SECONDS, connect=CONNECT_SECONDS)
    client = openai.AsyncOpenAI(
        api_key=connection.credential or "none",
        base_url=connection.base_url or DEFAULT_URLS["openai"],
        max_retries=0,
        timeout=timeout,
        # Connects only to addresses the SSRF rule allows, judged at connect (transport.py).
        http_client=guard.sdk_client(timeout),
        # No organization, project or key read from the environment.
        organization=None,
        project=None,
    )
    calls: dict[int, dict[str, str]] = {}
    try:
        # Messages and tools are built as plain dicts in the documented shapes.
        chunks = await client.chat.completions.create(
            model=connection.model,
            messages=cast(Any, messages_for(system, messages)),
            stream=True,
            stream_options={"include_usage": True},
            max_completion_tokens=max_tokens,
            tools=cast(Any, tools_for(tools)) if tools else openai.omit,
        )
        async for chunk in chunks:
            if chunk.usage is not None:
                yield Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    yield TextDelta(delta.content)
                for fragment in delta.tool_calls or ():
                    call = calls.setdefault(fragment.index, {"id": "", "name": "", "args": ""})
                    if fragment.id:
                        call["id"] = fragment.id
                    if fragment.function is not None:
                        call["name"] += fragment.function.name or ""
                        call["args"] += fragment.function.arguments or ""
    except openai.OpenAIError as exc:
        raise guard.refused() or _error(exc) from None
    finally:
        await client.close()
    for index in sorted(calls):
        call = calls[index]
        arguments, malformed = parse_arguments(call["args"])
        yield ToolCall(call["id"] or f"call_{index}", call["name"], arguments, malformed)
