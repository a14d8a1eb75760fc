"""``scheduled_at``: ISO 8601, or the natural-language form ``in <n> <unit>``.

Resend also takes phrases such as "tomorrow at 9am" or "Friday at 3pm ET";
we take ISO 8601 (a time without an offset is UTC) and the relative form
(``in 10 minutes``, ``in 1 hour``, ``in 2 days``), which need no calendar
or time zone guessing. Up to 30 days ahead, as at Resend.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from mail.errors import MailError, field_error

MAX_AHEAD = timedelta(days=30)

_UNITS = {
    "second": 1,
    "sec": 1,
    "s": 1,
    "minute": 60,
    "min": 60,
    "m": 60,
    "hour": 3600,
    "hr": 3600,
    "h": 3600,
    "day": 86400,
    "d": 86400,
    "week": 604800,
    "w": 604800,
}
_RELATIVE = re.compile(r"^in\s+(\d{1,6}|an?|one)\s*([a-z]+?)s?$")


def _invalid(value: str) -> MailError:
    return field_error(
        f"Invalid `scheduled_at` field: {value[:100]!r}. Use ISO 8601"
        " (2030-01-01T09:00:00Z) or the form `in 10 minutes`."
    )


def parse(value: object, now: datetime) -> datetime:
    """The moment ``value`` names; 422 validation_error if it is not one or not ahead."""
    if not isinstance(value, str) or not value.strip():
        raise field_error("The `scheduled_at` field must be a string.")
    text = value.strip()
    moment = _relative(text.lower(), now)
    if moment is None:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise _invalid(text) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
    if moment <= now:
        raise field_error("The `scheduled_at` field must be in the future.")
    if moment - now > MAX_AHEAD:
        raise field_error("The `scheduled_at` field must be at most 30 days ahead.")
    return moment.astimezone(UTC)


def _relative(text: str, now: datetime) -> datetime | None:
    match = _RELATIVE.match(" ".join(text.split()))
    if match is None:
        return None
    count_text, unit = match.groups()
    seconds = _UNITS.get(unit)
    if seconds is None:
        return None
    count = 1 if count_text in ("a", "an", "one") else int(count_text)
    return now + timedelta(seconds=count * seconds)
