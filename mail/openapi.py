"""The mail service's OpenAPI conventions: its error shape, credential and list parameters.

The document itself is built from the router (common/openapi.py); the
schemas here are derived from the tables the code enforces (the error names
of mail.errors, the list parameters of mail.web.lists).
"""

from __future__ import annotations

from typing import Any

from common.openapi import Profile, integer, obj, string, whole_number
from mail.auth.sessions import COOKIE_NAME
from mail.errors import STATUS_BY_NAME
from mail.web.lists import MAX_SEARCH_LENGTH, PER_PAGE_CHOICES, Sorts

ERROR = obj(
    {
        "statusCode": integer(minimum=400, maximum=599),
        "name": string(enum=STATUS_BY_NAME),
        "message": string(),
    },
    required=["statusCode", "name", "message"],
)

PROFILE = Profile(
    title="Mail panel API",
    description=(
        "The mail service's HTTP API (docs/mail.md). Errors are "
        "{statusCode, name, message}; a signed-in request carries the svc_session "
        "cookie. Every request spends the caller's rate-limit budget (429 "
        "rate_limit_exceeded with Retry-After); a state-changing request from "
        "another origin is refused 403. GET routes answer HEAD too; another "
        "method on a known path answers 405 with Allow."
    ),
    error_schema=ERROR,
    security_schemes={"session": {"type": "apiKey", "in": "cookie", "name": COOKIE_NAME}},
    security={"session": [{"session": []}]},
    with_body=frozenset({400, 413, 422}),
    with_auth=frozenset({401}),
    unsafe=frozenset({403}),
)


def list_query(sorts: Sorts) -> dict[str, Any]:
    """The list parameters parse_list_params reads, with this endpoint's sorts."""
    return {
        "page": whole_number(18),
        # Anything but these falls back to 10 (the spec), so any value is accepted.
        "per_page": string(description=f"one of {', '.join(map(str, PER_PAGE_CHOICES))}"),
        "search": string(max_length=MAX_SEARCH_LENGTH),
        # An unknown sort is ignored (the spec), not refused.
        "sort": string(description=f"one of {', '.join(sorts.columns)}; default {sorts.default}"),
        "direction": string(enum=("asc", "desc")),
    }
