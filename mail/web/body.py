"""Reading JSON bodies and their fields, with the spec's error names.

An absent required field is ``missing_required_field`` (422); a field of the
wrong type or value is ``validation_error`` (400); a field the route does not
know is ``validation_error`` too, so a typo never passes silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aiohttp import web

from common.web import BadJSON, read_json_object
from mail.errors import missing_required_field, validation_error


async def read_body(
    request: web.Request, *, allowed: Iterable[str] | None = None
) -> dict[str, Any]:
    """The request's JSON object; refuses fields outside ``allowed`` when given."""
    try:
        data = await read_json_object(request)
    except BadJSON as exc:
        raise validation_error(str(exc)) from None
    if allowed is not None:
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise validation_error(f"unknown field: {', '.join(unknown)}")
    return data


def required_str(data: dict[str, Any], field: str, *, max_length: int = 1000) -> str:
    value = data.get(field)
    if value is None or value == "":
        raise missing_required_field(field)
    return _check_str(field, value, max_length)


def optional_str(
    data: dict[str, Any], field: str, *, max_length: int = 1000, default: str | None = None
) -> str | None:
    value = data.get(field)
    if value is None:
        return default
    return _check_str(field, value, max_length)


def optional_bool(data: dict[str, Any], field: str) -> bool | None:
    value = data.get(field)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise validation_error(f"{field} must be true or false")
    return value


def _check_str(field: str, value: object, max_length: int) -> str:
    if not isinstance(value, str):
        raise validation_error(f"{field} must be a string")
    if len(value) > max_length:
        raise validation_error(f"{field} must be at most {max_length} characters")
    return value
