"""The mail service's error shape: ``{statusCode, name, message}``."""

from __future__ import annotations

from aiohttp import web

from common.web import ServiceError, json_response

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
    # The sending API's own names, as the sending API it follows (Resend) has them
    # (docs/mail.md, "Sending API"). validation_error also travels there with 422
    # (a field's value) and 403 (a from domain not verified), as Resend sends it.
    "missing_api_key": 401,
    "restricted_api_key": 401,
    "invalid_api_key": 403,
    "invalid_idempotency_key": 400,
    "invalid_idempotent_request": 409,
    "concurrent_idempotent_requests": 409,
    "invalid_from_address": 422,
    "invalid_attachment": 422,
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
    # A body over the size limit is over a limit: 413 is the table's quota_exceeded.
    "payload_too_large": "quota_exceeded",
    # A body not sent as application/json: the table has no 415.
    "unsupported_media_type": "validation_error",
    "rate_limited": "rate_limit_exceeded",
}


def error_body(status: int, name: str, message: str) -> dict[str, object]:
    return {"statusCode": status, "name": name, "message": message}


def render(status: int, kind: str, message: str, *, field: str | None = None) -> web.Response:
    # ``field`` is already named in the message; the shape has no place for it.
    name = _NAME_BY_KIND.get(kind)
    if name is None:
        name = "application_error" if status >= 500 else "invalid_parameter"
    if status >= 500:
        message = "internal error"  # never leak internals
    else:
        # A name always travels with its status from the spec's table.
        status = STATUS_BY_NAME[name]
    return json_response(error_body(status, name, message), status=status)


class MailError(ServiceError):
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


# --- the errors routes raise, one helper per name --------------------------


def validation_error(message: str) -> MailError:
    """A body field has a wrong type or value (400)."""
    return MailError("validation_error", message)


def invalid_parameter(message: str) -> MailError:
    """A query or path parameter has an invalid value (400)."""
    return MailError("invalid_parameter", message)


def unauthorized(message: str = "sign in first") -> MailError:
    return MailError("unauthorized", message)


def plan_required(message: str) -> MailError:
    return MailError("plan_required", message)


def forbidden(message: str) -> MailError:
    return MailError("forbidden", message)


def not_found(what: str = "resource") -> MailError:
    # One message whether the record is missing or belongs to someone else.
    return MailError("not_found", f"{what} not found")


def conflict(message: str) -> MailError:
    return MailError("conflict", message)


def quota_exceeded(message: str) -> MailError:
    return MailError("quota_exceeded", message)


def missing_required_field(field: str) -> MailError:
    return MailError("missing_required_field", f"{field} is required")


def rate_limit_exceeded(headers: dict[str, str]) -> MailError:
    return MailError("rate_limit_exceeded", "too many requests", headers=headers)


# --- the sending API's names (Resend's) ---------------------------------------


def missing_api_key() -> MailError:
    return MailError("missing_api_key", "Missing API key in the authorization header.")


def invalid_api_key() -> MailError:
    return MailError("invalid_api_key", "API key is invalid.")


def restricted_api_key() -> MailError:
    return MailError("restricted_api_key", "This API key is restricted to only send emails.")


def field_error(message: str, status: int = 422) -> MailError:
    """A sending API field with a wrong value: validation_error, 422 as Resend answers it."""
    return MailError("validation_error", message, status=status)
