"""One injectable clock: code asks it for the time, tests move it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


class Clock:
    """The real clock. Times are timezone-aware UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def timestamp(self) -> float:
        return self.now().timestamp()


class ManualClock(Clock):
    """A clock that only moves when told to; for tests."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2030, 1, 1, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float = 0, **kwargs: float) -> datetime:
        self._now += timedelta(seconds=seconds, **kwargs)
        return self._now

    def set(self, when: datetime) -> None:
        self._now = when
