"""The mail service's error shape: ``{statusCode, name, message}``."""

from __future__ import annotations

from aiohttp import web

from common.web import json_response

# name -> status, exactly the spec's table.
STATUS_BY_NAME = {
    "validation_error": 400,
    "invalid_parameter": 400,
    "unauthorized": 401,
    "plan_required": 402,
    "forbidden": 403,
    "not_found": 404,
    "method_not_allowed": 405,
    "conflict": 409,
    "quota_exceeded": 413,
    "missing_required_field": 422,
    "rate_limit_exceeded": 429,
    "application_error": 500,
}

# common/web.py's generic kinds -> our names.
_NAME_BY_KIND = {
    "validation": "validation_error",
    "bad_request": "invalid_parameter",
    "unauthorized": "unauthorized",
    "payment_required": "plan_required",
    "forbidden": "forbidden",
    "not_found": "not_found",
    "method_not_allowed": "method_not_allowed",
    "conflict": "conflict",
    "payload_too_large": "invalid_parameter",
    "rate_limited": "rate_limit_exceeded",
}


def error_body(status: int, name: str, message: str) -> dict[str, object]:
    return {"statusCode": status, "name": name, "message": message}


def render(status: int, kind: str, message: str) -> web.Response:
    name = _NAME_BY_KIND.get(kind)
    if name is None:
        name = "application_error" if status >= 500 else "invalid_parameter"
    if status >= 500:
        message = "internal error"  # never leak internals
    return json_response(error_body(status, name, message), status=status)


class MailError(Exception):
    """Raise anywhere in the mail service; renders as the spec's error shape."""

    def __init__(
        self,
        name: str,
        message: str,
        *,
        status: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.name = name
        self.message = message
        self.status = status or STATUS_BY_NAME[name]
        self.headers = headers or {}

    def response(self) -> web.Response:
        return json_response(
            error_body(self.status, self.name, self.message),
            status=self.status,
            headers=self.headers,
        )
