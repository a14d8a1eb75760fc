"""What every service is built with: settings, database, clock, job queue and
the process's notification hub."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Protocol

from aiohttp import web

from common.clock import Clock
from common.db import Database
from common.jobs import JobQueue
from common.notify import NotificationHub
from common.settings import Settings


@dataclass(frozen=True)
class Runtime:
    settings: Settings
    db: Database
    clock: Clock
    jobs: JobQueue
    # One LISTEN connection for every service of the process (common/notify.py);
    # each service's lifespan keeps it running with ``notifications.running()``.
    notifications: NotificationHub = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.notifications is None:
            object.__setattr__(self, "notifications", NotificationHub(self.db.dsn))


class Service(Protocol):
    """A service as the gateway sees it.

    Built once per process (job handlers are registered then); ``create_app``
    may be called more than once, for the path mount and each host mount, so
    it only builds routes. Long-lived resources (daemons, listeners) live in
    ``lifespan``, which the gateway runs once.
    """

    name: str

    def create_app(self, *, prefix: str = "") -> web.Application: ...

    def lifespan(self) -> AbstractAsyncContextManager[None] | None: ...
