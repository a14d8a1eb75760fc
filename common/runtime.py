"""What every service is built with: settings, database, clock and job queue."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from aiohttp import web

from common.clock import Clock
from common.db import Database
from common.jobs import JobQueue
from common.settings import Settings


@dataclass(frozen=True)
class Runtime:
    settings: Settings
    db: Database
    clock: Clock
    jobs: JobQueue


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
