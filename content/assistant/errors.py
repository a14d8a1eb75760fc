"""The assistant's refusals, in the CMS error shape (content/errors.py).

A provider's failure is the provider's, not ours: it answers 424 (the
request depended on the provider's, which failed) with a code naming how,
or 429 AI_PROVIDER_RATE_LIMITED with the provider's Retry-After. Inside a
stream the same {error, code, details} arrives as an ``error`` event.
"""

from __future__ import annotations

from typing import Any

from content.assistant.providers import ProviderError
from content.errors import ContentError, Problems

PROVIDER_FAILED_STATUS = 424
CODES = {
    "auth": "AI_PROVIDER_AUTH",
    "not_found": "AI_MODEL_NOT_FOUND",
    "rate_limited": "AI_PROVIDER_RATE_LIMITED",
    "unreachable": "AI_PROVIDER_UNREACHABLE",
    "refused": "AI_PROVIDER_REFUSED",
    "bad_request": "AI_PROVIDER_ERROR",
    "upstream": "AI_PROVIDER_ERROR",
}
MESSAGES = {
    "auth": "the model provider refused the credentials",
    "not_found": "the model provider does not know this model",
    "rate_limited": "the model provider is rate limiting this site; try again shortly",
    "unreachable": "the model provider could not be reached",
    "refused": "the model provider's address is not allowed",
    "bad_request": "the model provider refused the request",
    "upstream": "the model provider failed",
}


def provider_failure(exc: ProviderError, kind: str) -> ContentError:
    """A ProviderError as the person reads it: what failed, and the provider's own words."""
    details: dict[str, Any] = {"provider": kind, "reason": exc.message}
    if exc.status is not None:
        details["providerStatus"] = exc.status
    headers = None
    status = PROVIDER_FAILED_STATUS
    if exc.kind == "rate_limited":
        status = 429
        if exc.retry_after is not None:
            details["retryAfter"] = exc.retry_after
            headers = {"Retry-After": str(exc.retry_after)}
    return ContentError(status, CODES[exc.kind], MESSAGES[exc.kind], details, headers)


class NotConnected(ContentError):
    def __init__(self) -> None:
        super().__init__(
            409, "AI_NOT_CONNECTED", "no model provider is connected; an admin connects one first"
        )


class BudgetExceeded(ContentError):
    def __init__(self, scope: str, used: int, limit: int, resets_at: str, retry: int) -> None:
        who = "your" if scope == "person" else "the site's"
        super().__init__(
            429,
            "AI_BUDGET_EXCEEDED",
            f"{who} assistant budget for this month is spent ({used} of {limit} tokens)",
            {"scope": scope, "used": used, "limit": limit, "resetsAt": resets_at},
            {"Retry-After": str(retry)},
        )


def refuse_unknown(body: dict[str, Any], known: tuple[str, ...], problems: Problems) -> None:
    """Name each member of ``body`` this route does not read (a typo is not silently lost)."""
    for key in sorted(set(body) - set(known)):
        problems.add(key, f"is not a known member (known: {', '.join(known)})")
