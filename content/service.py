"""The CMS as the gateway builds it."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path

from aiohttp import web

from common.migrations import MigrationSet
from common.runtime import Runtime
from common.web import error_middleware
from content import errors

MIGRATIONS = MigrationSet("content", Path(__file__).parent / "migrations")


class ContentService:
    name = "content"

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def create_app(self, *, prefix: str = "") -> web.Application:
        app = web.Application(middlewares=[error_middleware(errors.render)])
        return app

    def lifespan(self) -> AbstractAsyncContextManager[None] | None:
        return None
