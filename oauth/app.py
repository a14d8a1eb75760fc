"""``create_app(config)``: the OAuth 2.1 server as a route-only aiohttp app."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from common.migrations import MigrationSet
from common.web import error_middleware
from oauth import errors

MIGRATIONS = MigrationSet("oauth", Path(__file__).parent / "migrations")

DEFAULT_BASE_PATH = "/oauth"
DEFAULT_ADMIN_BASE_PATH = "/admin/oauth"


@dataclass(frozen=True)
class OAuthConfig:
    db: Any
    secret: str
    scopes: tuple[str, ...]
    base_path: str = DEFAULT_BASE_PATH
    admin_base_path: str = DEFAULT_ADMIN_BASE_PATH


def create_app(config: OAuthConfig) -> web.Application:
    app = web.Application(middlewares=[error_middleware(errors.render)])
    return app
