"""Local model servers speaking each provider's documented streaming wire format.

One aiohttp app plays all three: OpenAI's POST /v1/chat/completions
(server-sent ``chat.completion.chunk`` events, tool-call arguments in
fragments tagged by index), Anthropic's POST /v1/messages (``message_start``,
``content_block_*`` with ``input_json_delta``, ``message_delta``,
``message_stop``) and Ollama's POST /api/chat (NDJSON, whole tool calls). A
test scripts what the next answers say (:class:`Script`), and every request
body and header the server received is kept (``requests``), so a test can
search them for secrets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Reply:
    """One scripted model answer: text pieces, then tool calls, or a failure."""

    text: list[str] = field(default_factory=list)
    tools: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    error: str = ""
    retry_after: str | None = None
    # Answer plain JSON, ignoring stream=true (a server that cannot stream).
    no_stream: bool = False
    tokens: tuple[int, int] = (11, 7)


@dataclass
class Script:
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    # Bearer tokens (or x-api-key values) accepted; empty accepts any.
    keys: set[str] = field(default_factory=set)
    models: set[str] = field(default_factory=set)
    # Echo the marker the connection test asks for as a tool call.
    echo_marker: bool = True

    def next(self, body: dict[str, Any]) -> Reply:
        if self.replies:
            return self.replies.pop(0)
        tools = body.get("tools") or []
        names = [t.get("name") or t.get("function", {}).get("name") for t in tools]
        if self.echo_marker and "connection_check" in names:
            marker = _marker(body)
            return Reply(tools=[("connection_check", {"marker": marker})])
        return Reply(text=["Hello", " there"])

    def everything_sent(self) -> str:
        return json.dumps(self.requests)


def _marker(body: dict[str, Any]) -> str:
    text = json.dumps(body)
    start = text.index("marker m") + len("marker ")
    return text[start : start + 13]


def _split(text: str, parts: int = 3) -> list[str]:
    size = max(1, len(text) // parts)
    return [text[i : i + size] for i in range(0, len(text), size)]


async def _sse(request: web.Request, events: list[tuple[str | None, Any]]) -> web.StreamResponse:
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        payload = data if isinstance(data, str) else json.dumps(data)
        await resp.write(f"{head}data: {payload}\n\n".encode())
    await resp.write_eof()
    return resp


def make_app(script: Script) -> web.Application:
    async def authorize(
        request: web.Request, body: dict[str, Any], kind: str
    ) -> web.Response | None:
        script.requests.append(
            {"path": request.path, "headers": dict(request.headers), "body": body}
        )
        if kind == "anthropic":
            key = request.headers.get("x-api-key", "")
        else:
            key = request.headers.get("Authorization", "").removeprefix("Bearer ")
        if script.keys and key not in script.keys:
            return _error(kind, 401, "invalid api key", None)
        if script.models and body.get("model") not in script.models:
            return _error(kind, 404, f"model '{body.get('model')}' not found", None)
        return None

    async def openai_chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        refused = await authorize(request, body, "openai")
        if refused is not None:
            return refused
        reply = script.next(body)
        if reply.status != 200:
            return _error("openai", reply.status, reply.error, reply.retry_after)
        if reply.no_stream:
            return web.json_response({"id": "x", "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "".join(reply.text)}, "finish_reason": "stop"}
            ]})  # fmt: skip
        base = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": body["model"],
        }
        events: list[tuple[str | None, Any]] = [
            (None, {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]})
        ]  # fmt: skip
        for piece in reply.text:
            events.append((None, {**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}))  # fmt: skip
        for index, (name, args) in enumerate(reply.tools):
            fragments = _split(json.dumps(args))
            first = {"index": index, "id": f"call_{index}", "type": "function",
                     "function": {"name": name, "arguments": ""}}  # fmt: skip
            events.append((None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [first]}, "finish_reason": None}]}))  # fmt: skip
            for fragment in fragments:
                more = {"index": index, "function": {"arguments": fragment}}
                events.append((None, {**base, "choices": [{"index": 0, "delta": {"tool_calls": [more]}, "finish_reason": None}]}))  # fmt: skip
        finish = "tool_calls" if reply.tools else "stop"
        events.append(
            (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        )
        usage = {"prompt_tokens": reply.tokens[0], "completion_tokens": reply.tokens[1],
                 "total_tokens": sum(reply.tokens)}  # fmt: skip
        events.append((None, {**base, "choices": [], "usage": usage}))
        events.append((None, "[DONE]"))
        return await _sse(request, events)

    async def anthropic_messages(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        refused = await authorize(request, body, "anthropic")
        if refused is not None:
            return refused
        reply = script.next(body)
        if reply.status != 200:
            return _error("anthropic", reply.status, reply.error, reply.retry_after)
        if reply.no_stream:
            return web.json_response({"id": "msg_1", "type": "message", "role": "assistant", "content": [
                {"type": "text", "text": "".join(reply.text)}], "model": body["model"], "stop_reason": "end_turn",
                "usage": {"input_tokens": 1, "output_tokens": 1}})  # fmt: skip
        message = {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": body["model"],
                   "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": reply.tokens[0], "output_tokens": 1}}  # fmt: skip
        events: list[tuple[str | None, Any]] = [
            ("message_start", {"type": "message_start", "message": message})
        ]
        index = 0
        if reply.text:
            events.append(("content_block_start", {"type": "content_block_start", "index": 0,
                                                   "content_block": {"type": "text", "text": ""}}))  # fmt: skip
            for piece in reply.text:
                events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                       "delta": {"type": "text_delta", "text": piece}}))  # fmt: skip
            events.append(("content_block_stop", {"type": "content_block_stop", "index": 0}))
            index = 1
        for offset, (name, args) in enumerate(reply.tools):
            i = index + offset
            events.append(("content_block_start", {"type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {}}}))  # fmt: skip
            for fragment in _split(json.dumps(args)):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": fragment}}))  # fmt: skip
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        stop = "tool_use" if reply.tools else "end_turn"
        events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                         "usage": {"output_tokens": reply.tokens[1]}}))  # fmt: skip
        events.append(("message_stop", {"type": "message_stop"}))
        return await _sse(request, events)

    async def ollama_chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        refused = await authorize(request, body, "ollama")
        if refused is not None:
            return refused
        reply = script.next(body)
        if reply.status != 200:
            return _error("ollama", reply.status, reply.error, reply.retry_after)
        base = {"model": body["model"], "created_at": "2026-11-26T00:00:00Z"}
        lines = []
        for piece in reply.text:
            lines.append(
                {**base, "message": {"role": "assistant", "content": piece}, "done": False}
            )
        if reply.tools:
            calls = [{"function": {"name": n, "arguments": a}} for n, a in reply.tools]
            lines.append({**base, "message": {"role": "assistant", "content": "", "tool_calls": calls}, "done": False})  # fmt: skip
        lines.append({**base, "message": {"role": "assistant", "content": ""}, "done": True,
                      "done_reason": "stop", "prompt_eval_count": reply.tokens[0], "eval_count": reply.tokens[1]})  # fmt: skip
        resp = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await resp.prepare(request)
        for line in lines:
            await resp.write((json.dumps(line) + "\n").encode())
        await resp.write_eof()
        return resp

    app = web.Application()
    app.router.add_post("/v1/chat/completions", openai_chat)
    app.router.add_post("/v1/messages", anthropic_messages)
    app.router.add_post("/api/chat", ollama_chat)
    return app


def _error(kind: str, status: int, message: str, retry_after: str | None) -> web.Response:
    headers = {"retry-after": retry_after} if retry_after else None
    if kind == "openai":
        body: Any = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    elif kind == "anthropic":
        body = {"type": "error", "error": {"type": "rate_limit_error" if status == 429 else "api_error",
                                           "message": message}}  # fmt: skip
    else:
        body = {"error": message}
    return web.json_response(body, status=status, headers=headers)


def token_server(issued: list[dict[str, Any]]) -> web.Application:
    """A local OAuth authorization server's token endpoint (RFC 6749 JSON answers)."""
    counter = {"n": 0}

    async def token(request: web.Request) -> web.Response:
        form = dict(await request.post())
        issued.append(form)
        if form.get("grant_type") == "refresh_token" and form.get("refresh_token") != "refresh-1":
            return web.json_response({"error": "invalid_grant"}, status=400)
        counter["n"] += 1
        return web.json_response(
            {
                "access_token": f"access-{counter['n']}",
                "refresh_token": "refresh-1",
                "expires_in": 3600,
                "token_type": "Bearer",
            }
        )

    app = web.Application()
    app.router.add_post("/oauth/token", token)
    return app
