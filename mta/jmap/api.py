"""The JMAP API request (RFC 8620 3): parse, check, run each method call in order.

Request-level errors are problem details (RFC 7807) with the RFC's type URIs;
method-level errors become ``["error", {...}, callId]`` responses. Back-references
(``"#ids": {"resultOf", "name", "path"}``) are resolved against earlier responses
of the same request with the JSON-pointer rules of RFC 8620 3.7, ``*`` included.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from aiohttp import web

from common import metrics
from mta.jmap.context import JmapContext
from mta.jmap.registry import (
    METHODS,
    MethodCall,
    MethodError,
    Principal,
    RequestState,
)

log = logging.getLogger(__name__)

PROBLEM = "application/problem+json"
ERROR_PREFIX = "urn:ietf:params:jmap:error:"


class RequestError(Exception):
    """A request-level error (RFC 8620 3.6.1): the whole request fails."""

    def __init__(self, kind: str, detail: str, status: int = 400, **extra: Any) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.status = status
        self.extra = extra

    def response(self) -> web.Response:
        body = {
            "type": ERROR_PREFIX + self.kind,
            "status": self.status,
            "detail": self.detail,
            **self.extra,
        }
        return web.Response(status=self.status, text=json.dumps(body), content_type=PROBLEM)


def capabilities(ctx: JmapContext) -> dict[str, Any]:
    """The server capabilities the session advertises (names -> their limits)."""
    from mta.jmap.session import server_capabilities

    return server_capabilities(ctx)


def parse_request(raw: bytes, ctx: JmapContext) -> dict[str, Any]:
    """The Request object, or RequestError notJSON / notRequest / unknownCapability / limit."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise RequestError("notJSON", "the request did not parse as I-JSON") from None
    if not isinstance(data, dict):
        raise RequestError("notRequest", "the request is not a JSON object")
    using = data.get("using")
    calls = data.get("methodCalls")
    created = data.get("createdIds")
    if not isinstance(using, list) or not all(isinstance(u, str) for u in using):
        raise RequestError("notRequest", "using must be an array of capability names")
    if not isinstance(calls, list):
        raise RequestError("notRequest", "methodCalls must be an array")
    for call in calls:
        if (
            not isinstance(call, list)
            or len(call) != 3
            or not isinstance(call[0], str)
            or not isinstance(call[1], dict)
            or not isinstance(call[2], str)
        ):
            raise RequestError(
                "notRequest", "each method call is [name, arguments object, call id]"
            )
    if created is not None and (
        not isinstance(created, dict) or not all(isinstance(v, str) for v in created.values())
    ):
        raise RequestError("notRequest", "createdIds must map creation ids to ids")
    known = capabilities(ctx)
    unknown = [u for u in using if u not in known]
    if unknown:
        raise RequestError("unknownCapability", f"the server does not support {unknown[0]}")
    if len(calls) > ctx.limits.max_calls_in_request:
        raise RequestError(
            "limit",
            f"at most {ctx.limits.max_calls_in_request} method calls per request",
            limit="maxCallsInRequest",
        )
    return data


async def run_request(
    data: dict[str, Any], ctx: JmapContext, principal: Principal, session_state: str
) -> dict[str, Any]:
    state = RequestState(
        using=frozenset(data["using"]), created_ids=dict(data.get("createdIds") or {})
    )
    responses: list[list[Any]] = []
    for name, arguments, call_id in data["methodCalls"]:
        try:
            args = resolve_references(arguments, responses)
            method = METHODS.get(name)
            if method is None or not method.allowed(state.using):
                metrics.JMAP_CALLS.labels("unknown").inc()
                raise MethodError("unknownMethod", f"unknown method {name}")
            metrics.JMAP_CALLS.labels(name).inc()
            call = MethodCall(
                name=name,
                arguments=args,
                call_id=call_id,
                ctx=ctx,
                principal=principal,
                request=state,
            )
            state.extra = []
            result = await method.handler(call)
            responses.append([name, result, call_id])
            responses.extend([extra_name, extra, call_id] for extra_name, extra in state.extra)
        except MethodError as exc:
            responses.append(["error", exc.arguments(), call_id])
        except Exception:
            log.exception("JMAP method %s failed", name)
            responses.append(["error", {"type": "serverFail"}, call_id])
    out: dict[str, Any] = {"methodResponses": responses, "sessionState": session_state}
    if "createdIds" in data:
        out["createdIds"] = state.created_ids
    return out


def resolve_references(arguments: dict[str, Any], responses: list[list[Any]]) -> dict[str, Any]:
    """Arguments with every ``#name`` ResultReference replaced by its value (RFC 8620 3.7)."""
    if not any(k.startswith("#") for k in arguments):
        return arguments
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        if not key.startswith("#"):
            continue
        plain = key[1:]
        if plain in arguments:
            raise MethodError("invalidArguments", f"both {plain} and #{plain} given")
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("resultOf"), str)
            or not isinstance(value.get("name"), str)
            or not isinstance(value.get("path"), str)
        ):
            raise MethodError("invalidResultReference", f"#{plain} is not a ResultReference")
        out[plain] = _reference_value(value, responses)
    out.update((k, v) for k, v in arguments.items() if not k.startswith("#"))
    return out


def _reference_value(ref: dict[str, Any], responses: list[list[Any]]) -> Any:
    for name, result, call_id in responses:
        if call_id == ref["resultOf"]:
            if name != ref["name"]:
                raise MethodError(
                    "invalidResultReference",
                    f"call {ref['resultOf']} answered {name}, not {ref['name']}",
                )
            try:
                return evaluate_pointer(result, ref["path"])
            except (KeyError, IndexError, TypeError, ValueError):
                raise MethodError(
                    "invalidResultReference", f"path {ref['path']} does not resolve"
                ) from None
    raise MethodError("invalidResultReference", f"no response with call id {ref['resultOf']}")


def evaluate_pointer(document: Any, path: str) -> Any:
    """RFC 6901 JSON pointer with JMAP's ``*`` (RFC 8620 3.7): map over an array, flatten."""
    if path == "":
        return document
    if not path.startswith("/"):
        raise ValueError("a pointer starts with /")
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]
    return _walk(document, tokens)


def _walk(value: Any, tokens: list[str]) -> Any:
    for i, token in enumerate(tokens):
        if isinstance(value, list):
            if token == "*":
                out: list[Any] = []
                for item in value:
                    found = _walk(item, tokens[i + 1 :])
                    if isinstance(found, list):
                        out.extend(found)
                    else:
                        out.append(found)
                return out
            if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
                raise ValueError(f"{token} is not an array index")
            value = value[int(token)]
        elif isinstance(value, dict):
            value = value[token]
        else:
            raise TypeError("the pointer goes past a value")
    return value
