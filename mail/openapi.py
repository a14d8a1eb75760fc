"""The mail service's OpenAPI conventions: its error shape, credential and list parameters.

The document itself is built from the router (common/openapi.py); the
schemas here are derived from the tables the code enforces (the error names
of mail.errors, the list parameters of mail.web.lists).
"""

from __future__ import annotations

from typing import Any

from common.openapi import Profile, array, boolean, integer, obj, string, whole_number
from mail.accounts.service import NOTIFICATION_DEFAULTS
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
        "cookie. Every request spends the caller's rate-limit budget, a token bucket "
        "of RATE_LIMIT_PER_SECOND (10) a second with a burst of RATE_LIMIT_BURST (20) "
        "(429 rate_limit_exceeded with Retry-After); a state-changing request from "
        "another origin is refused 403. GET routes answer HEAD too; another "
        "method on a known path answers 405 with Allow."
    ),
    error_schema=ERROR,
    security_schemes={
        "session": {"type": "apiKey", "in": "cookie", "name": COOKIE_NAME},
        # The sending API's key (docs/mail.md, "Sending API"): Authorization: Bearer re_...
        "api_key": {"type": "http", "scheme": "bearer"},
        # Webmail (docs/mail.md, "Webmail"): the mailbox's own 12-hour cookie.
        "webmail": {"type": "apiKey", "in": "cookie", "name": "svc_webmail"},
    },
    security={
        "session": [{"session": []}],
        # Sending routes: a key; the reads, cancel and reschedule also take a session.
        "api_key": [{"api_key": []}, {"session": []}],
        "webmail": [{"webmail": []}],
    },
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
        # Read case-insensitively; empty is the endpoint's default.
        "direction": string(pattern="^([aA][sS][cC]|[dD][eE][sS][cC])?$"),
    }


# mail.web.lists.list_envelope: every list endpoint's answer.
LIST = obj(
    {
        "object": {"const": "list"},
        "data": array({"type": "object"}),
        "page": integer(minimum=1),
        "per_page": {"type": "integer", "enum": list(PER_PAGE_CHOICES)},
        "total": integer(minimum=0),
        "pages": integer(minimum=0),
    },
    required=["object", "data", "page", "per_page", "total", "pages"],
)

_WHEN = string(fmt="date-time")

# mail.accounts.serializers.account: the signed-in account.
ACCOUNT = obj(
    {
        "object": {"const": "account"},
        "id": string(),
        "email": string(),
        "name": string(),
        "email_verified": boolean(),
        "email_verified_at": string(fmt="date-time", nullable=True),
        "totp_enabled": boolean(),
        "is_owner": boolean(),
        "notifications": obj(
            {name: boolean() for name in NOTIFICATION_DEFAULTS}, required=NOTIFICATION_DEFAULTS
        ),
        "referral_code": string(),
        "created_at": _WHEN,
        "updated_at": _WHEN,
    },
    required=[
        "object", "id", "email", "name", "email_verified", "email_verified_at",
        "totp_enabled", "is_owner", "notifications", "referral_code", "created_at",
        "updated_at",
    ],
)  # fmt: skip
