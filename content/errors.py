"""The CMS error shape: ``{error, code, details}``.

Every failure of the service renders through here: the service's own
exceptions (:class:`ContentError` and its subclasses render themselves) and,
through :func:`render`, router misses, aiohttp errors and database violations
caught by the common error middleware.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from common.web import ServiceError, json_response

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


def render(status: int, kind: str, message: str, *, field: str | None = None) -> web.Response:
    if field is not None and status < 500:
        # A named bad input (a query parameter, a body field) is a field error.
        return invalid(field, message.removeprefix(f"{field}: ")).response()
    code = _CODE_BY_KIND.get(kind, "INTERNAL" if status >= 500 else "BAD_REQUEST")
    if kind == "validation":
        status = VALIDATION_STATUS
    if status >= 500:
        message = "internal error"
    return json_response(error_body(message, code), status=status)


class ContentError(ServiceError):
    """An error that renders itself in the CMS shape."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers

    def response(self) -> web.Response:
        return json_response(
            error_body(self.message, self.code, self.details),
            status=self.status,
            headers=self.headers,
        )


# --- one class per stable code -------------------------------------------


class BadRequest(ContentError):
    def __init__(self, message: str, code: str = "BAD_REQUEST") -> None:
        super().__init__(400, code, message)


class Unauthorized(ContentError):
    def __init__(self, message: str = "sign in first", code: str = "UNAUTHORIZED") -> None:
        super().__init__(401, code, message)


class Forbidden(ContentError):
    def __init__(
        self,
        message: str = "you may not do this",
        code: str = "FORBIDDEN",
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(403, code, message, details)


class NotFound(ContentError):
    def __init__(self, message: str = "not found", code: str = "NOT_FOUND") -> None:
        super().__init__(404, code, message)


class Conflict(ContentError):
    def __init__(
        self, message: str, code: str = "CONFLICT", details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(409, code, message, details)


class RateLimited(ContentError):
    def __init__(self, message: str, headers: dict[str, str]) -> None:
        super().__init__(429, "RATE_LIMITED", message, headers=headers)


@dataclass(frozen=True)
class FieldError:
    key: str
    message: str


class ValidationFailed(ContentError):
    """VALIDATION_FAILED with ``details.fields = [{key, message}]``."""

    def __init__(self, fields: list[FieldError], message: str | None = None) -> None:
        self.fields = fields
        first = f"{fields[0].key}: {fields[0].message}" if fields else "invalid input"
        super().__init__(
            VALIDATION_STATUS,
            "VALIDATION_FAILED",
            message or first,
            {"fields": [{"key": f.key, "message": f.message} for f in fields]},
        )


def invalid(key: str, message: str) -> ValidationFailed:
    return ValidationFailed([FieldError(key, message)])


@dataclass
class Problems:
    """Collects field errors so one response names every bad input at once."""

    fields: list[FieldError] = field(default_factory=list)

    def add(self, key: str, message: str) -> None:
        self.fields.append(FieldError(key, message))

    def __bool__(self) -> bool:
        return bool(self.fields)

    def raise_if_any(self) -> None:
        if self.fields:
            raise ValidationFailed(self.fields)
