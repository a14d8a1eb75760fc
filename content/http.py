"""Request parsing shared by every route: bodies, paging, typed values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web

from common.web import BadJSON, read_json_object
from content.errors import BadRequest, ContentError, invalid

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_BODY_BYTES = 4 << 20


async def read_body(request: web.Request) -> dict[str, Any]:
    """The JSON object body; an empty body is ``{}``."""
    if request.body_exists and request.content_type != "application/json":
        raise ContentError(415, "UNSUPPORTED_MEDIA_TYPE", "send the body as application/json")
    try:
        return await read_json_object(request, max_bytes=MAX_BODY_BYTES)
    except BadJSON as exc:
        if exc.field is not None:
            raise invalid(exc.field, str(exc).removeprefix(f"{exc.field}: ")) from None
        raise BadRequest(str(exc), "BAD_JSON") from None


@dataclass(frozen=True)
class Paging:
    page: int
    limit: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.limit

    def meta(self, total: int) -> dict[str, int]:
        return {"total": total, "page": self.page, "limit": self.limit}


def _positive(request: web.Request, name: str, default: int, maximum: int) -> int:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise invalid(name, "must be a whole number") from None
    if value < 1 or value > maximum:
        raise invalid(name, f"must be between 1 and {maximum}")
    return value


def paging(request: web.Request) -> Paging:
    return Paging(
        page=_positive(request, "page", 1, 1_000_000),
        limit=_positive(request, "limit", DEFAULT_LIMIT, MAX_LIMIT),
    )


def page_body(items: list[Any], paging: Paging, total: int) -> dict[str, Any]:
    return {"data": items, "meta": paging.meta(total)}


def text_field(
    body: dict[str, Any], key: str, *, required: bool = False, max_length: int = 300
) -> str | None:
    """A string member of a body, trimmed; None when absent and optional."""
    value = body.get(key)
    if value is None:
        if required:
            raise invalid(key, "is required")
        return None
    if not isinstance(value, str):
        raise invalid(key, "must be a string")
    value = value.strip()
    if required and not value:
        raise invalid(key, "is required")
    if len(value) > max_length:
        raise invalid(key, f"must be at most {max_length} characters")
    return value
