"""The CMS error shape: ``{error, code, details}``."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.web import json_response

# Validation failures answer 400 everywhere (docs/content.md).
VALIDATION_STATUS = 400

_CODE_BY_KIND = {
    "bad_request": "BAD_REQUEST",
    "validation": "VALIDATION_FAILED",
    "unauthorized": "UNAUTHORIZED",
    "forbidden": "FORBIDDEN",
    "not_found": "NOT_FOUND",
    "method_not_allowed": "METHOD_NOT_ALLOWED",
    "conflict": "CONFLICT",
    "payload_too_large": "PAYLOAD_TOO_LARGE",
    "unsupported_media_type": "UNSUPPORTED_MEDIA_TYPE",
    "rate_limited": "RATE_LIMITED",
}


def error_body(message: str, code: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": message, "code": code, "details": details or {}}


def render(status: int, kind: str, message: str) -> web.Response:
    code = _CODE_BY_KIND.get(kind, "INTERNAL" if status >= 500 else "BAD_REQUEST")
    if kind == "validation":
        status = VALIDATION_STATUS
    if status >= 500:
        message = "internal error"
    return json_response(error_body(message, code), status=status)


class ContentError(Exception):
    def __init__(
        self, status: int, code: str, message: str, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details

    def response(self) -> web.Response:
        return json_response(error_body(self.message, self.code, self.details), status=self.status)
