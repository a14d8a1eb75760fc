"""The local model runtime (kind ``ollama``) and its hosted variant (``ollama-cloud``), through the ollama SDK.

Wire format: POST /api/chat answers newline-delimited JSON, one
``{"message": {...}, "done": false}`` object per line; a tool call arrives
whole (``message.tool_calls[].function`` with its arguments already an
object), never in fragments. The last line (``"done": true``) carries
``prompt_eval_count`` and ``eval_count``, the tokens in and out.

The local runtime answers at the admin's address (http://127.0.0.1:11434 by
default) with no credential; the hosted variant at :data:`CLOUD_URL`, fixed,
with the API key as a Bearer token.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import ollama

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
    status_kind,
)
from content.assistant.toolbox import ToolSpec

# The hosted variant's one endpoint; no URL field (tests point it at a stand-in).
CLOUD_URL = "https://ollama.com"


def url_of(connection: Connection) -> str:
    if connection.kind == "ollama-cloud":
        return CLOUD_URL
    return connection.base_url or DEFAULT_URLS["ollama"]


def messages_for(system: str, messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for m in messages:
        if m["role"] == "user":
            out.append({"role": "user", "content": m["text"]})
        elif m["role"] == "assistant":
            item: dict[str, Any] = {"role": "assistant", "content": m.get("text") or ""}
            if m.get("toolCalls"):
                item["tool_calls"] = [
                    {"function": {"name": c["name"], "arguments": c["arguments"]}}
                    for c in m["toolCalls"]
                ]
            out.append(item)
        else:
            out.append({"role": "tool", "content": m["content"], "tool_name": m["name"]})
    return out


def _message(raw: str) -> str:
    """The runtime's error text: its JSON {"error": ...} or the body as it is."""
    try:
        value = json.loads(raw)
    except ValueError:
        return raw.strip()[:300] or "the model runtime refused the request"
    return str(value.get("error", raw))[:300] if isinstance(value, dict) else raw[:300]


async def stream(
    connection: Connection,
    system: str,
    messages: Sequence[dict[str, Any]],
    tools: Sequence[ToolSpec],
    *,
    max_tokens: int,
) -> AsyncIterator[Event]:
    headers = {"Authorization": f"Bearer {connection.credential}"} if connection.credential else {}
    # Connects only to addresses the SSRF rule allows, judged at connect (transport.py).
    guard = transport.Guard(connection.kind, allow_private=connection.allow_private)
    client = ollama.AsyncClient(
        host=url_of(connection),
        headers=headers,
        timeout=httpx.Timeout(TIMEOUT_SECONDS, connect=CONNECT_SECONDS),
        **guard.ollama_options(),
    )
    if not connection.credential:
        # The SDK falls back to OLLAMA_API_KEY from the environment; provider
        # credentials are never environment variables (spec).
        client._client.headers.pop("authorization", None)
    count = 0
    try:
        extra: dict[str, Any] = {}
        if tools:
            extra["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in tools
            ]
        chunks = await client.chat(
            model=connection.model,
            messages=messages_for(system, messages),
            stream=True,
            options={"num_predict": max_tokens},
            **extra,
        )
        async for chunk in chunks:
            message = chunk.message
            if message.content:
                yield TextDelta(message.content)
            for call in message.tool_calls or ():
                count += 1
                arguments = dict(call.function.arguments or {})
                yield ToolCall(f"call_{count}", call.function.name, arguments)
            if chunk.done:
                yield Usage(chunk.prompt_eval_count or 0, chunk.eval_count or 0)
    except ollama.ResponseError as exc:
        status = exc.status_code if exc.status_code and exc.status_code > 0 else 502
        raise ProviderError(status_kind(status), _message(exc.error), status=status) from None
    except (ConnectionError, httpx.TransportError):
        unreachable = ProviderError("unreachable", "the model runtime could not be reached")
        raise guard.refused() or unreachable from None
    finally:
        await client.close()
