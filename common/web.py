"""HTTP helpers every service uses: the error middleware and JSON bodies.

Each service keeps its own error shape. It passes a renderer to
:func:`error_middleware`, which turns router misses (404, 405), aiohttp's own
HTTP errors, translated database violations and unexpected exceptions into a
response of that shape. A service's own exceptions render themselves: any
exception with a ``response()`` method is asked for its response.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from aiohttp import web

from common.db import ConflictError, ConstraintError, translate_db_error

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Generic kinds a renderer maps to its service's names.
KIND_BY_STATUS = {
    400: "bad_request",
    401: "unauthorized",
    402: "payment_required",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    410: "gone",
    411: "length_required",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation",
    429: "rate_limited",
    500: "internal",
    503: "unavailable",
}


class Renderer(Protocol):
    def __call__(self, status: int, kind: str, message: str) -> web.Response: ...


class RendersItself(Protocol):
    def response(self) -> web.StreamResponse: ...


def error_middleware(render: Renderer) -> Any:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise  # redirects and other non-errors pass through unchanged
            kind = KIND_BY_STATUS.get(exc.status, "bad_request" if exc.status < 500 else "internal")
            message = exc.text if exc.text and not exc.text.startswith(f"{exc.status}:") else None
            response = render(exc.status, kind, message or _default_message(exc, request))
            if isinstance(exc, web.HTTPMethodNotAllowed):
                response.headers["Allow"] = ", ".join(sorted(exc.allowed_methods))
            for name in ("Retry-After", "WWW-Authenticate"):
                if name in exc.headers:
                    response.headers[name] = exc.headers[name]
            return response
        except Exception as exc:
            respond = getattr(exc, "response", None)
            if callable(respond):
                return respond()  # type: ignore[no-any-return]
            data_error = (
                exc if isinstance(exc, ConflictError | ConstraintError) else translate_db_error(exc)
            )
            if isinstance(data_error, ConflictError):
                return render(409, "conflict", data_error.message)
            if isinstance(data_error, ConstraintError):
                return render(400, "validation", data_error.message)
            log.exception("unhandled error on %s %s", request.method, request.path)
            return render(500, "internal", "internal error")

    return middleware


def _default_message(exc: web.HTTPException, request: web.Request) -> str:
    if isinstance(exc, web.HTTPNotFound):
        return f"no route for {request.method} {request.path}"
    if isinstance(exc, web.HTTPMethodNotAllowed):
        return f"{request.method} is not allowed on {request.path}"
    return exc.reason


def json_response(
    data: Any, *, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.json_response(data, status=status, headers=headers, dumps=_dumps)


def _default(value: Any) -> Any:
    # datetimes render as ISO 8601; anything else unexpected is a bug, not data.
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _dumps(data: Any) -> str:
    return json.dumps(data, default=_default, separators=(",", ":"))


class BadJSON(ValueError):
    """The body is not the JSON object the route expects."""


async def read_json_object(request: web.Request, *, max_bytes: int = 1 << 20) -> dict[str, Any]:
    """Read a JSON object body; raise BadJSON for anything else."""
    if request.content_length is not None and request.content_length > max_bytes:
        raise web.HTTPRequestEntityTooLarge(max_size=max_bytes, actual_size=request.content_length)
    raw = await request.content.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise web.HTTPRequestEntityTooLarge(max_size=max_bytes, actual_size=len(raw))
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadJSON(f"body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadJSON("body must be a JSON object")
    return data
