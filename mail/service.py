"""The mail service as the gateway builds it."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path

from aiohttp import web

from common.migrations import MigrationSet
from common.runtime import Runtime
from common.web import error_middleware
from mail import errors

MIGRATIONS = MigrationSet("mail", Path(__file__).parent / "migrations")


class MailService:
    name = "mail"

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def create_app(self, *, prefix: str = "") -> web.Application:
        # Mail always sits at a root: mail clients look for its paths there.
        app = web.Application(middlewares=[error_middleware(errors.render)])
        return app

    def lifespan(self) -> AbstractAsyncContextManager[None] | None:
        return None
