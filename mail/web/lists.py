"""List parameters and the list envelope every mail list endpoint uses.

Parameters (spec, "List parameters"): ``page`` (1-based), ``per_page`` (10,
25, 50 or 100; anything else falls back to 10), ``search``, ``sort`` (from a
per-endpoint whitelist; an unknown sort is ignored), ``direction`` (asc or
desc). Pagination is by offset.

A store function receives a :class:`ListParams` and uses ``order_by``,
``limit`` and ``offset``; the sort whitelist maps public names to SQL
expressions owned by the endpoint, so a client never writes SQL.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mail.errors import invalid_parameter

PER_PAGE_CHOICES = (10, 25, 50, 100)
DEFAULT_PER_PAGE = 10
MAX_SEARCH_LENGTH = 200


@dataclass(frozen=True)
class Sorts:
    """One endpoint's sort whitelist: public name -> SQL expression."""

    columns: Mapping[str, str]
    default: str
    default_direction: str = "desc"
    # Appended to every ORDER BY so pages are stable when sort values tie.
    tiebreak: str = "id"

    def __post_init__(self) -> None:
        if self.default not in self.columns:
            raise ValueError(f"default sort {self.default!r} is not in the whitelist")


@dataclass(frozen=True)
class ListParams:
    page: int
    per_page: int
    search: str | None
    sort: str
    direction: str
    sorts: Sorts

    @property
    def limit(self) -> int:
        return self.per_page

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.per_page

    @property
    def order_by(self) -> str:
        """The ORDER BY clause body, built only from whitelisted SQL."""
        column = self.sorts.columns[self.sort]
        direction = "ASC" if self.direction == "asc" else "DESC"
        return f"{column} {direction}, {self.sorts.tiebreak} {direction}"

    @property
    def search_pattern(self) -> str | None:
        """``search`` as an ILIKE pattern matching anywhere, wildcards escaped."""
        if not self.search:
            return None
        escaped = self.search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return f"%{escaped}%"


def parse_list_params(query: Mapping[str, str], sorts: Sorts) -> ListParams:
    page = _page(query.get("page"))
    per_page = _per_page(query.get("per_page"))
    search = (query.get("search") or "").strip() or None
    if search is not None and len(search) > MAX_SEARCH_LENGTH:
        raise invalid_parameter(f"search must be at most {MAX_SEARCH_LENGTH} characters")
    sort = query.get("sort") or sorts.default
    if sort not in sorts.columns:
        sort = sorts.default  # the spec: an unrecognised sort is ignored, not an error
    direction = (query.get("direction") or sorts.default_direction).lower()
    if direction not in ("asc", "desc"):
        raise invalid_parameter("direction must be asc or desc")
    return ListParams(page, per_page, search, sort, direction, sorts)


def _page(raw: str | None) -> int:
    if raw is None or raw == "":
        return 1
    try:
        page = int(raw)
    except ValueError:
        raise invalid_parameter("page must be a positive integer") from None
    if page < 1:
        raise invalid_parameter("page must be a positive integer")
    return page


def _per_page(raw: str | None) -> int:
    try:
        value = int(raw or "")
    except ValueError:
        return DEFAULT_PER_PAGE
    return value if value in PER_PAGE_CHOICES else DEFAULT_PER_PAGE


def list_envelope(data: Sequence[dict[str, Any]], params: ListParams, total: int) -> dict[str, Any]:
    """``{object: "list", data, page, per_page, total, pages}``."""
    return {
        "object": "list",
        "data": list(data),
        "page": params.page,
        "per_page": params.per_page,
        "total": total,
        "pages": math.ceil(total / params.per_page),
    }
