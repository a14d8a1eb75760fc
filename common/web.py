"""HTTP helpers every service uses: the error middleware and request bodies.

Each service keeps its own error shape. It passes a renderer to
:func:`error_middleware`, which turns router misses (404, 405), aiohttp's own
HTTP errors, translated database violations and unexpected exceptions into a
response of that shape. A service's own exceptions render themselves: they
subclass :class:`ServiceError` and are asked for their response.

Input is checked at the edge for what PostgreSQL cannot store: a text value
with NUL or an unpaired surrogate never reaches a handler from the path (404),
the query (400 naming the parameter), a header (400 naming it; aiohttp keeps
bytes that are not UTF-8 as lone surrogates), a JSON body or a form body (400
naming the field). JSON bodies are also refused when nested deeper than
:data:`MAX_JSON_DEPTH` or holding NaN or an infinite number.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import re
from collections.abc import Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import parse_qsl

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

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
    408: "request_timeout",
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
    """Render an error in the service's shape; ``field`` names the bad input when known."""

    def __call__(
        self, status: int, kind: str, message: str, *, field: str | None = None
    ) -> web.Response: ...


class ServiceError(Exception):
    """The base of every service's own errors: each renders itself in its shape.

    Subclasses (mail's MailError, content's ContentError, oauth's OAuthError)
    build their response; the error middleware only asks for it.
    """

    def response(self) -> web.StreamResponse:
        raise NotImplementedError


def error_middleware(render: Renderer) -> Any:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            check_request(request)
            return await handler(request)
        except BadInput as exc:
            # Refused input is the client's error: no traceback, the field named.
            return render(400, "bad_request", str(exc), field=exc.field)
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
        except ServiceError as exc:
            return exc.response()
        except Exception as exc:
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


# --- what PostgreSQL cannot store ---------------------------------------------

# NUL ends a C string in the driver and text columns refuse it; an unpaired
# surrogate cannot be encoded as UTF-8 at all.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")

# Deeper JSON than this is refused. Our own documents nest a few levels (CMS
# entry fields, filter rules); 64 leaves room for any real one, and the check
# keeps Python's recursion limit (about 1,000) out of reach.
MAX_JSON_DEPTH = 64


class BadInput(ValueError):
    """Client input a service cannot take; ``field`` names where, when known."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class BadJSON(BadInput):
    """The body is not the JSON object the route expects."""


def text_problem(value: str) -> str | None:
    """Why a text value cannot be stored, or None."""
    found = _UNSTORABLE.search(value)
    if found is None:
        return None
    if found.group() == "\x00":
        return "must not contain NUL characters"
    return "must not contain unpaired surrogates"


def printable(name: str) -> str:
    """A name safe to echo back (its NULs and surrogates replaced)."""
    return _UNSTORABLE.sub("\ufffd", name)


def check_request(request: web.Request) -> None:
    """Refuse a path, query or header no handler could use (see the module docstring)."""
    if _UNSTORABLE.search(request.path):
        raise web.HTTPNotFound(text="no resource has such a name")
    for key, value in request.query.items():
        problem = text_problem(key) or text_problem(value)
        if problem is not None:
            name = printable(key)
            raise BadInput(f"{name}: {problem}", name)
    for key, value in request.headers.items():
        # aiohttp keeps bytes that are not UTF-8 as lone surrogates
        # (surrogateescape); hashing a token or storing a User-Agent chokes on them.
        if not value.isascii() and text_problem(value) is not None:
            raise BadInput(f"the {printable(key)} header is not valid UTF-8")


class QuietClientErrors(logging.Filter):
    """One line, not a traceback, for a malformed request aiohttp's parser refuses.

    aiohttp logs every request it cannot parse (a control character in a
    header, broken chunked framing) at ERROR with a traceback, and answers
    400 before any app runs. That is the client's error, like the 400s the
    apps answer: installed on the ``aiohttp.server`` logger it becomes an
    INFO line naming the reason.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if (
            isinstance(exc, HttpProcessingError)
            and exc.code < 500
            and isinstance(record.args, tuple)
        ):
            reason = next((line.strip() for line in exc.message.splitlines() if line.strip()), "")
            record.msg = f"{record.msg} (refused {exc.code}: %s)"
            record.args = (*record.args, reason)
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


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


# The whole body must arrive within this many seconds, however it trickles:
# a client sending a byte at a time cannot hold a handler (and what it holds)
# open for ever. Generous for the few MiB these bodies may hold; nginx's
# client_body_timeout (60 s) bounds only the gap between two reads.
BODY_DEADLINE_SECONDS = 30.0


async def read_body(request: web.Request, *, max_bytes: int) -> bytes:
    """The whole body, however many TCP segments or chunks it arrives in.

    ``request.content.read(n)`` returns what has arrived so far, so one call
    can see half a body; this reads to the end. Over ``max_bytes`` is 413; a
    body not complete within :data:`BODY_DEADLINE_SECONDS` is 408.
    """
    if request.content_length is not None and request.content_length > max_bytes:
        raise _too_large(max_bytes, request.content_length)
    body = bytearray()
    try:
        async with asyncio.timeout(BODY_DEADLINE_SECONDS):
            while len(body) <= max_bytes:
                chunk = await request.content.read(max_bytes + 1 - len(body))
                if not chunk:
                    return bytes(body)
                body += chunk
    except TimeoutError:
        raise web.HTTPRequestTimeout(
            text=f"the request body did not arrive within {BODY_DEADLINE_SECONDS:g} seconds"
        ) from None
    except ConnectionResetError:
        # The client left mid-body: nobody reads the answer, and it is the
        # client's doing, so it is a 400 in the access log rather than an
        # "Error handling request" traceback at ERROR.
        raise web.HTTPBadRequest(
            text="the client closed the connection before its body arrived"
        ) from None
    raise _too_large(max_bytes, len(body))


def _too_large(max_bytes: int, size: int) -> web.HTTPRequestEntityTooLarge:
    return web.HTTPRequestEntityTooLarge(
        max_size=max_bytes,
        actual_size=size,
        text=f"the request body is larger than the limit of {max_bytes} bytes",
    )


def is_json_type(content_type: str) -> bool:
    return content_type == "application/json" or (
        content_type.startswith("application/") and content_type.endswith("+json")
    )


async def read_json_object(request: web.Request, *, max_bytes: int = 1 << 20) -> dict[str, Any]:
    """Read a JSON object body; raise BadJSON for anything else.

    An empty body is ``{}``. A body that is not sent as JSON is 415 and never
    parsed: text/plain, forms and multipart are what a cross-site page can
    send without a CORS preflight.
    """
    raw = await read_body(request, max_bytes=max_bytes)
    if not raw.strip():
        return {}
    if not is_json_type(request.content_type):
        raise web.HTTPUnsupportedMediaType(text="send the body as application/json")
    return parse_json_object(raw)


def parse_json_object(raw: bytes | str) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except RecursionError:
        raise BadJSON(f"the body is nested deeper than {MAX_JSON_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadJSON(f"body is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadJSON("body must be a JSON object")
    check_json(data)
    return data


def check_json(data: Any) -> None:
    """Refuse what PostgreSQL cannot store, naming the field (``a.b[2]``).

    Walks without recursion, so its own depth check cannot overflow.
    """
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            problem = text_problem(value)
            if problem is not None:
                raise BadJSON(f"{path}: {problem}", path)
        elif isinstance(value, float):
            # NaN and Infinity (and 1e999, which parses as infinity) are not JSON numbers.
            if not math.isfinite(value):
                raise BadJSON(f"{path}: must be a finite number", path)
        elif isinstance(value, dict | list):
            if depth >= MAX_JSON_DEPTH:
                raise BadJSON(f"the body is nested deeper than {MAX_JSON_DEPTH} levels")
            if isinstance(value, list):
                stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value))
                continue
            for key, v in value.items():
                name = f"{path}.{printable(key)}" if path else printable(key)
                problem = text_problem(key)
                if problem is not None:
                    raise BadJSON(f"{name}: the name {problem}", name)
                stack.append((v, name, depth + 1))


async def read_form(request: web.Request, *, max_bytes: int = 1 << 20) -> list[tuple[str, str]]:
    """An ``application/x-www-form-urlencoded`` body as (name, value) pairs, in order.

    Like aiohttp's ``request.post()`` for this one type, but refusing bytes
    that are not UTF-8 and values with NUL or unpaired surrogates (BadInput).
    """
    raw = await read_body(request, max_bytes=max_bytes)
    try:
        pairs = parse_qsl(raw.decode("utf-8"), keep_blank_values=True, errors="strict")
    except UnicodeDecodeError:
        raise BadInput("the form body is not UTF-8") from None
    for key, value in pairs:
        problem = text_problem(key) or text_problem(value)
        if problem is not None:
            name = printable(key)
            raise BadInput(f"{name}: {problem}", name)
    return pairs
