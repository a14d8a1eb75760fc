"""The CMS as the gateway builds it: one object per process, apps built from it."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from aiohttp import web

from common.migrations import MigrationSet
from common.openapi import publish
from common.outbound import OutboundClient
from common.ratelimit import RateLimiter
from common.runtime import Runtime
from common.web import error_middleware
from content import admin, errors
from content.activity import routes as activity_routes
from content.assistant import routes as assistant_routes
from content.assistant.bubble import routes as bubble_routes
from content.assistant.conversations import routes as conversation_routes
from content.assistant.proposals import routes as proposal_routes
from content.assistant.toolbox import default_toolbox
from content.auth import routes as auth_routes
from content.changes import Changes
from content.context import CONTEXT, Context
from content.delivery import routes as delivery_routes
from content.delivery.cache import DeliveryCache
from content.design import routes as design_routes
from content.design.service import Catalogue
from content.design.surfaces import check_surfaces
from content.entries import publishing, schedule
from content.entries import routes as entry_routes
from content.host import SiteReader
from content.keys import routes as key_routes
from content.media import routes as media_routes
from content.media.service import make_blob_store
from content.menus import routes as menu_routes
from content.openapi import PROFILE
from content.options import ContentOptions
from content.people import routes as people_routes
from content.people.service import bootstrap_owner
from content.plugins import routes as plugin_routes
from content.plugins.service import Plugins
from content.preview import routes as preview_routes
from content.preview import store as preview_store
from content.realtime import routes as realtime_routes
from content.realtime.service import HUB, Hub
from content.settings import load_content_settings
from content.site import routes as site_routes
from content.social import routes as social_routes
from content.social import service as social
from content.taxonomies import routes as taxonomy_routes
from content.types import routes as type_routes
from content.visual import routes as visual_routes
from content.visual.definitions import VisualDefinition
from content.visual.options import HostVisual, report_visual_problems
from content.visual.render import render_visual
from content.webhooks import routes as webhook_routes
from content.webhooks.events import DELIVER_JOB
from content.webhooks.service import delivery_handler

MIGRATIONS = MigrationSet.beside(__file__)

# The OpenAPI document of every route, and its page for people (docs/content.md);
# below the mount prefix (/cms/api/openapi.json through the gateway).
OPENAPI_PATH = "/api/openapi.json"
DOCS_PATH = "/api/docs"

# Hosts read the version as app[CONTENT_VERSION]() (or ContentService.content_version()).
VersionFunction = Callable[[], int]
CONTENT_VERSION: web.AppKey[VersionFunction] = web.AppKey("content_version")

ROUTE_TABLES = (
    auth_routes.routes,
    people_routes.routes,
    activity_routes.routes,
    key_routes.routes,
    type_routes.routes,
    entry_routes.routes,
    taxonomy_routes.routes,
    menu_routes.routes,
    site_routes.routes,
    media_routes.routes,
    preview_routes.routes,
    delivery_routes.routes,
    realtime_routes.routes,
    webhook_routes.routes,
    plugin_routes.routes,
    design_routes.routes,
    visual_routes.routes,
    social_routes.routes,
    proposal_routes.routes,
    assistant_routes.routes,
    conversation_routes.routes,
    bubble_routes.routes,
)


class ContentService:
    """The CMS as a host library: ``ContentService(runtime, ContentOptions(...))``.

    ``create_app()`` builds the routes; ``content_version()`` and
    ``render_visual()`` are what a host's pages call (docs/content.md, "Host API").
    """

    name = "content"

    def __init__(self, runtime: Runtime, options: ContentOptions | None = None) -> None:
        self.runtime = runtime
        self.options = options or ContentOptions()
        self.mounted_at = ""
        # A wrong visual definition or manifest stops the start, naming each problem.
        self.visual = HostVisual.from_options(self.options)
        self.settings = load_content_settings(runtime.settings)
        self.changes = Changes(runtime.notifications)
        self.hub = Hub(runtime.db, runtime.clock, self.changes)
        # Delivery answers of this process, emptied when the content version moves.
        self.delivery_cache = DeliveryCache(self.changes.version)
        self.context = Context(
            runtime=runtime,
            config=self.settings,
            limiter=RateLimiter(runtime.db, runtime.clock),
            changes=self.changes,
            blobs=make_blob_store(self.settings),
            visual=self.visual,
        )
        # One handler per queue: a second service on the same runtime (a path
        # mount and a test client together) shares the first one's.
        if schedule.PUBLISH_JOB not in runtime.jobs.kinds:
            runtime.jobs.register(schedule.PUBLISH_JOB, publishing.handler(self.context))
        # Webhook deliveries leave through the SSRF-safe client (common/outbound.py).
        self.outbound = OutboundClient(allow_private=self.settings.webhook_allow_private)
        if DELIVER_JOB not in runtime.jobs.kinds:
            runtime.jobs.register(DELIVER_JOB, delivery_handler(self.context, self.outbound))
        for kind, handler in (
            (social.SEND_JOB, social.send_handler(self.context)),
            (social.DUE_JOB, social.due_handler(self.context)),
        ):
            if kind not in runtime.jobs.kinds:
                runtime.jobs.register(kind, handler)
        # Plugins are imported now (their routes join every app built below);
        # their records are written in lifespan(). Hooks hear this process's commits.
        self.plugins = Plugins(self.context, self.settings.plugin_dir, self.options.plugins)
        self.changes.on_commit(self.plugins.on_commit)
        self.design = Catalogue(
            check_surfaces(self.options.design_surfaces), self.plugins.active_surfaces
        )

    def content_version(self) -> int:
        """A process-local counter that changes after every content mutation."""
        return self.changes.version()

    def render_visual(
        self,
        html: str,
        definition: VisualDefinition | Mapping[str, Any],
        layout: Mapping[str, Any] | None,
        editing: bool = False,
    ) -> str:
        """renderVisual(html, definition, layout, editing=False) (content/visual/render.py);
        in editing mode the page also links the admin's overlay, served by this service."""
        extra = None
        if editing:
            base = self.runtime.settings.public_url.rstrip("/") + self.mounted_at
            extra = admin.overlay(base)
        return render_visual(html, definition, layout, editing, overlay=extra)

    def reader(self) -> SiteReader:
        """Delivery's answers in process, for the host's pages (content/host.py)."""
        return SiteReader(self.context)

    def create_app(self, *, prefix: str = "") -> web.Application:
        # Where the admin's overlay is linked from: the first path mount (a bare
        # mount, such as the social callback's at the root, only when it is alone).
        if prefix and not self.mounted_at:
            self.mounted_at = prefix
        app = web.Application(middlewares=[error_middleware(errors.render)])
        app[CONTEXT] = dataclasses.replace(
            self.context, prefix=prefix, plugins=self.plugins, design=self.design
        )
        app[CONTENT_VERSION] = self.content_version
        app[HUB] = self.hub
        app.on_shutdown.append(self._close_sockets)
        app[delivery_routes.CACHE] = self.delivery_cache
        app[plugin_routes.PLUGINS] = self.plugins
        app[design_routes.DESIGN] = self.design
        # The assistant's tools (content/assistant/toolbox.py); a host may pass its own.
        app[conversation_routes.TOOLBOX] = self.options.assistant_toolbox or default_toolbox()
        for table in ROUTE_TABLES:
            app.add_routes(table)
        self.plugins.add_routes(app)
        admin.install(app)
        publish(app, PROFILE, json_path=OPENAPI_PATH, html_path=DOCS_PATH)
        return app

    async def _close_sockets(self, app: web.Application) -> None:
        # Open sockets would hold a graceful stop for its whole timeout.
        await self.hub.close_all()

    def lifespan(self) -> AbstractAsyncContextManager[None] | None:
        return self._lifespan()

    @asynccontextmanager
    async def _lifespan(self) -> AsyncIterator[None]:
        if self.settings.bootstrap is not None:
            await bootstrap_owner(self.context, self.settings.bootstrap)
        # Preview links are invalid after a restart (spec); every process of a
        # deployment starts together, so each clears them as it starts.
        async with self.runtime.db.connection() as conn:
            await preview_store.clear(conn)
            await report_visual_problems(conn, self.visual)
        await self.plugins.start(self.settings.plugin_autoenable)
        refresher = asyncio.create_task(self.hub.refresh_forever(), name="realtime-presence")
        try:
            async with self.runtime.notifications.running():
                yield
        finally:
            refresher.cancel()
            await self.plugins.close()
            await self.outbound.close()
            await self.context.blobs.close()
