"""``create_app(config)``: the OAuth 2.1 server as a route-only aiohttp app."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from aiohttp import web

from common.migrations import MigrationSet
from common.openapi import publish
from common.web import error_middleware
from oauth import errors, rfc8414
from oauth.config import OAuthConfig
from oauth.openapi import PROFILE
from oauth.routes import ROUTES, Route, View
from oauth.server import AuthorizationServer

MIGRATIONS = MigrationSet.beside(__file__)

DEFAULT_BASE_PATH = "/oauth"
DEFAULT_ADMIN_BASE_PATH = "/admin/oauth"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

server_key = web.AppKey("oauth_server", AuthorizationServer)


def create_app(
    config: OAuthConfig, *, server: AuthorizationServer | None = None
) -> web.Application:
    """Build the routes. Pass ``server`` to share one across several mounts."""
    server = server or AuthorizationServer(config)
    app = web.Application(middlewares=[error_middleware(errors.render)])
    app[server_key] = server
    issuer_path = urlsplit(config.issuer).path if config.issuer else config.base_path
    for route in ROUTES:
        handler = _guarded(server, route)
        for path in _paths(config, route, issuer_path):
            app.router.add_route(route.method, path, handler)
    # The OpenAPI document of these routes, and its page for people (docs/oauth.md).
    publish(
        app,
        PROFILE,
        json_path=config.base_path + "/openapi.json",
        html_path=config.base_path + "/docs",
    )
    return app


def _paths(config: OAuthConfig, route: Route, issuer_path: str) -> list[str]:
    if route.mount == "well_known":
        return rfc8414.well_known_paths(issuer_path)
    prefix = config.admin_base_path if route.mount == "admin" else config.base_path
    return [prefix + route.path]


def _guarded(server: AuthorizationServer, route: Route) -> Handler:
    view: View = route.view
    if route.guard == "open":

        async def open_handler(request: web.Request) -> web.StreamResponse:
            return await view(server, request)

        # The view's OpenAPI declaration travels with the handler (common/openapi.py).
        return functools.update_wrapper(open_handler, view)
    guard = server.config.require_user if route.guard == "user" else server.config.require_admin

    async def guarded_handler(request: web.Request) -> web.StreamResponse:
        await guard(request)
        return await view(server, request)

    return functools.update_wrapper(guarded_handler, view)
