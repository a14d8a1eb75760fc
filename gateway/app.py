"""The root aiohttp application: mounts every service and runs the workers.

Default layout on one host (docs/architecture.md):
  /oauth, /admin/oauth, /.well-known/oauth-authorization-server[/oauth] -> oauth
  /cms                                                                  -> content
  /site (development only)                                              -> example_site
  /.well-known/jmap, /jmap                                              -> jmap (mta/jmap)
  /healthz, /livez, /readyz, /metrics                                   -> the gateway
  everything else                                                       -> mail
Host mounts (HOST_MOUNTS=host=service) serve a service at the root of a host.
``only`` serves one service at the root, with the spec's paths verbatim.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

from aiohttp import web

import example_site
from common.runtime import Runtime, Service
from common.web import json_response
from content import ContentService
from content.social.service import CALLBACK_PATH
from gateway import observe
from gateway.mounts import Everything, PathPrefixes, mount_by_rule
from gateway.services import (
    OAUTH_PREFIXES,
    Daemon,
    all_migrations,
    build_daemons,
    build_services,
)
from mta.jmap.service import PATHS as JMAP_PATHS
from mta.store.raw import close_message_files

log = logging.getLogger(__name__)

CMS_PREFIX = "/cms"
SITE_PREFIX = "/site"
# The return leg of a social network's consent (spec: PUBLIC_URL + /social/oauth/callback).
SOCIAL_CALLBACK = CALLBACK_PATH
HEALTH_PATH = "/healthz"

runtime_key = web.AppKey("runtime", Runtime)
services_key = web.AppKey("services", dict)


async def healthz(request: web.Request) -> web.Response:
    runtime = request.app[runtime_key]
    if await runtime.db.ping():
        return json_response({"status": "ok"})
    return json_response({"status": "unavailable"}, status=503)


def build_app(runtime: Runtime, *, only: str | None = None) -> web.Application:
    services = build_services(runtime)
    created: list[tuple[str, web.Application]] = []

    def create(name: str, **kwargs: str) -> web.Application:
        app = services[name].create_app(**kwargs)
        created.append((name, app))
        return app

    if only is not None:
        if only not in services:
            raise ValueError(f"unknown service {only!r}; choose one of {', '.join(services)}")
        root = create(only)
        chosen = {only: services[only]}
    else:
        root = web.Application()
        chosen = services
        for host, name in runtime.settings.host_mounts:
            root.add_domain(host, _host_app(create, name))
        mount_by_rule(root, PathPrefixes(OAUTH_PREFIXES), create("oauth", prefix="/oauth"))
        root.add_subapp(CMS_PREFIX, create("content", prefix=CMS_PREFIX))
        # JMAP at its absolute paths (/.well-known/jmap, /jmap/...), before mail's catch-all.
        # The return leg of a social network's consent is PUBLIC_URL + /social/oauth/callback
        # (spec), at the root: the CMS answers it there as well as under /cms.
        mount_by_rule(root, PathPrefixes((SOCIAL_CALLBACK,)), create("content"))
        mount_by_rule(root, PathPrefixes(JMAP_PATHS), create("jmap"))
        owned: tuple[str, ...] = (
            *OAUTH_PREFIXES,
            CMS_PREFIX,
            SOCIAL_CALLBACK,
            HEALTH_PATH,
            *observe.PATHS,
            *JMAP_PATHS,
        )
        if runtime.settings.is_development:
            # The CMS's example host (docs/content.md, "Host API"), with its seed data.
            content = services["content"]
            assert isinstance(content, ContentService)
            root.add_subapp(SITE_PREFIX, example_site.create_site(content))
            root.cleanup_ctx.append(example_site.first_run(content))
            owned = (*owned, SITE_PREFIX)
        mount_by_rule(root, Everything(owned), create("mail"))
    for name, app in created:
        app[observe.service_name_key] = name
    root[runtime_key] = runtime
    root[services_key] = chosen
    root.router.add_get(HEALTH_PATH, healthz)
    daemons = build_daemons(runtime) if only in (None, "mail") else []
    observe.install(root, observe.Health(runtime, all_migrations(), daemons))
    for service in chosen.values():
        root.cleanup_ctx.append(_service_lifespan(service))
    # The SMTP daemon runs with mail (SMTP_ENABLED, off when RUN_WORKERS is off).
    for daemon in daemons:
        root.cleanup_ctx.append(_service_lifespan(daemon))
    if runtime.settings.run_workers:
        root.cleanup_ctx.append(_job_workers)
    # After every lifespan above (on_cleanup runs the cleanup contexts first).
    root.on_cleanup.append(_close_message_files)
    return root


async def _close_message_files(app: web.Application) -> None:
    await close_message_files()


def _host_app(create: Callable[..., web.Application], name: str) -> web.Application:
    """The app at the root of a HOST_MOUNTS host.

    A mail host also routes the OAuth prefixes: its consent (/authorize) and
    pairing (/pair) pages call the OAuth server on their own origin, where the
    svc_session cookie is sent, so a mail host without /oauth could not
    complete a browser or device flow.
    """
    if name != "mail":
        return create(name)
    host = web.Application()
    mount_by_rule(host, PathPrefixes(OAUTH_PREFIXES), create("oauth", prefix="/oauth"))
    mount_by_rule(host, Everything(OAUTH_PREFIXES), create("mail"))
    return host


def _service_lifespan(service: Service | Daemon):  # type: ignore[no-untyped-def]
    async def lifespan(app: web.Application) -> AsyncIterator[None]:
        cm = service.lifespan()
        if cm is None:
            yield
            return
        async with cm:
            yield

    return lifespan


async def _job_workers(app: web.Application) -> AsyncIterator[None]:
    runtime = app[runtime_key]
    task = asyncio.create_task(runtime.jobs.run_forever(), name="job-worker")
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
