"""OAuth errors: ``{error, error_description}`` as RFC 6749 section 5.2 shapes them."""

from __future__ import annotations

from aiohttp import web

from common.web import json_response

_ERROR_BY_KIND = {
    "bad_request": "invalid_request",
    "validation": "invalid_request",
    "unauthorized": "invalid_client",
    "forbidden": "access_denied",
    "not_found": "not_found",
    "method_not_allowed": "method_not_allowed",
    "conflict": "conflict",
    "rate_limited": "slow_down",
}


def error_body(error: str, description: str) -> dict[str, str]:
    return {"error": error, "error_description": description}


def render(status: int, kind: str, message: str) -> web.Response:
    error = _ERROR_BY_KIND.get(kind, "server_error" if status >= 500 else "invalid_request")
    if status >= 500:
        message = "internal error"
    return json_response(
        error_body(error, message), status=status, headers={"Cache-Control": "no-store"}
    )
