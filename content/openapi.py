"""The CMS's OpenAPI conventions: its error shape, credentials and paging parameters."""

from __future__ import annotations

from typing import Any

from common.openapi import Profile, array, integer, obj, string, whole_number
from content.auth.credentials import SESSION_COOKIE
from content.http import MAX_LIMIT

ERROR = obj(
    {
        "error": string(),
        "code": string(pattern="^[A-Z][A-Z_]*$"),
        "details": {"type": "object"},
    },
    required=["error", "code", "details"],
)

PROFILE = Profile(
    title="CMS API",
    description=(
        "The content service's admin API (Bearer session token or agent key, or the "
        "cms_session cookie) and its delivery API (X-Api-Key delivery key); see "
        "docs/content.md. Errors are {error, code, details}; validation failures "
        "answer 400 VALIDATION_FAILED naming each field in details. GET routes answer "
        "HEAD too; another method on a known path answers 405 with Allow."
    ),
    error_schema=ERROR,
    security_schemes={
        "bearer": {"type": "http", "scheme": "bearer"},
        "cookie": {"type": "apiKey", "in": "cookie", "name": SESSION_COOKIE},
        "deliveryKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key"},
    },
    security={
        "admin": [{"bearer": []}, {"cookie": []}],
        "delivery": [{"deliveryKey": []}, {"bearer": []}],
    },
    every_route=frozenset({404}),
    with_body=frozenset({400, 413, 415}),
)

# content.http.paging: whole numbers; an empty value is the default.
PAGING: dict[str, Any] = {
    "page": whole_number(7),
    "limit": whole_number(len(str(MAX_LIMIT))),
}

# content.http.page_body: every paged list's answer.
PAGE = obj(
    {
        "data": array({"type": "object"}),
        "meta": obj(
            {"total": integer(minimum=0), "page": integer(minimum=1), "limit": integer(minimum=1)},
            required=["total", "page", "limit"],
        ),
    },
    required=["data", "meta"],
)
