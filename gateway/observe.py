"""What an operator watches: request ids, HTTP metrics, /metrics, /livez, /readyz.

- ``observe`` (the root app's outermost middleware) gives each request its id
  (an incoming sane ``X-Request-Id``, else a new one: ``common.logs``), sets
  it for everything the request runs, and counts the request by service,
  route template (the matched resource's canonical path, never the raw path)
  and status. ``X-Request-Id`` is added to every response, streamed and
  WebSocket ones included, by an ``on_response_prepare`` hook.
- ``/metrics`` answers a client inside ``METRICS_ALLOW`` (loopback by default)
  or one presenting ``Authorization: Bearer <METRICS_TOKEN>``; anyone else
  gets 403 (401 for a wrong token).
- ``/livez``: the process answers. ``/readyz``: the database answers, every
  migration this code ships is applied, the protocol daemons are listening,
  and the process is not draining (SIGTERM turns it 503 before the listeners
  close: gateway/main.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from common import metrics
from common.client_ip import client_ip
from common.crypto import constant_time_equals
from common.logs import REQUEST_ID_HEADER, accept_request_id, reset_request_id, set_request_id
from common.migrations import MigrationSet, pending
from common.runtime import Runtime
from common.web import json_response
from mta.store.outbound import QUEUE_GAUGE_COLUMNS

access = logging.getLogger("gateway.access")

METRICS_PATH = "/metrics"
LIVE_PATH = "/livez"
READY_PATH = "/readyz"
PATHS = (METRICS_PATH, LIVE_PATH, READY_PATH)

# The service an app serves, set on each service's app by build_app.
service_name_key = web.AppKey("service_name", str)
request_id_key = web.RequestKey("request_id", str)

# The scrape-time queue gauges: the job queue's part and the outbound queue's, one statement.
QUEUE_SQL = metrics.queue_sql(metrics.JOBS_QUEUE_COLUMNS, QUEUE_GAUGE_COLUMNS)


@dataclass
class Health:
    """Per process: what /readyz and /metrics need, and whether SIGTERM came."""

    runtime: Runtime
    migrations: Sequence[MigrationSet]
    daemons: Sequence[Any] = ()
    draining: bool = False
    queue_gauges: metrics.DatabaseGauges = field(
        default_factory=lambda: metrics.DatabaseGauges(QUEUE_SQL)
    )


health_key = web.AppKey("health", Health)


def _service_of(request: web.Request) -> str:
    for app in reversed(request.match_info.apps):
        name = app.get(service_name_key)
        if name is not None:
            return name
    return "gateway"


def _route_of(request: web.Request) -> str:
    resource = request.match_info.route.resource
    if resource is None:
        return "unmatched"
    return resource.canonical


def observer(*, access_log: bool) -> Any:
    """The outermost middleware: request id, HTTP metrics, and the access log when asked."""

    @web.middleware
    async def observe(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        request_id = accept_request_id(request.headers.get(REQUEST_ID_HEADER))
        request[request_id_key] = request_id
        token = set_request_id(request_id)
        started = time.perf_counter()
        status = 500
        try:
            response = await handler(request)
            status = response.status
            return response
        except web.HTTPException as exc:
            status = exc.status
            exc.headers[REQUEST_ID_HEADER] = request_id
            raise
        finally:
            elapsed = time.perf_counter() - started
            service, route = _service_of(request), _route_of(request)
            method = request.method if request.method in metrics.HTTP_METHODS else "other"
            metrics.http_request(service, route, method, status, elapsed)
            if access_log:
                # The route template, never the raw path: paths and queries carry tokens.
                access.info(
                    "%s %s %s",
                    method,
                    route,
                    status,
                    extra={
                        "service": service,
                        "method": method,
                        "route": route,
                        "status": status,
                        "duration_seconds": round(elapsed, 6),
                    },
                )
            reset_request_id(token)

    return observe


async def add_request_id(request: web.Request, response: web.StreamResponse) -> None:
    request_id = request.get(request_id_key)
    if request_id is not None:
        response.headers[REQUEST_ID_HEADER] = request_id


# --- /metrics -------------------------------------------------------------------


def _may_scrape(request: web.Request, runtime: Runtime) -> int | None:
    """None when allowed, else the status to refuse with."""
    settings = runtime.settings
    auth = request.headers.get("Authorization", "")
    scheme, _, presented = auth.partition(" ")
    if settings.metrics_token and scheme.lower() == "bearer":
        if constant_time_equals(presented.strip(), settings.metrics_token):
            return None
        return 401
    try:
        address = ipaddress.ip_address(client_ip(request, settings.trusted_proxies))
    except ValueError:
        return 403
    if any(address in net for net in settings.metrics_allow):
        return None
    return 403


async def metrics_handler(request: web.Request) -> web.Response:
    runtime = request.app[health_key].runtime
    refused = _may_scrape(request, runtime)
    if refused == 401:
        return json_response(
            {"error": "unauthorized", "message": "a valid METRICS_TOKEN is required"},
            status=401,
            headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
        )
    if refused is not None:
        return json_response(
            {"error": "forbidden", "message": "metrics are not served to this address"},
            status=403,
        )
    gauges = request.app[health_key].queue_gauges
    with contextlib.suppress(Exception):  # the database is down: the rest still counts
        await gauges.refresh(runtime.db, runtime.clock.now())
    body = metrics.exposition([gauges])
    return web.Response(body=body, headers={"Content-Type": metrics.CONTENT_TYPE})


# --- health ---------------------------------------------------------------------


async def livez(request: web.Request) -> web.Response:
    return json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    health = request.app[health_key]
    runtime = health.runtime
    checks: dict[str, str] = {}
    checks["draining"] = "yes" if health.draining else "no"
    try:
        missing = await pending(runtime.db, health.migrations)
        checks["database"] = "ok"
        checks["migrations"] = "ok" if not missing else f"{len(missing)} pending"
    except Exception:
        checks["database"] = "unreachable"
        checks["migrations"] = "unknown"
    for daemon in health.daemons:
        checks[daemon.name] = "listening" if daemon.listening() else "not listening"
    ready = (
        not health.draining
        and checks["database"] == "ok"
        and checks["migrations"] == "ok"
        and all(checks[d.name] == "listening" for d in health.daemons)
    )
    return json_response(
        {"status": "ready" if ready else "unavailable", "checks": checks},
        status=200 if ready else 503,
    )


async def sample_pool(app: web.Application) -> AsyncIterator[None]:
    """Once a second: this process's pool, for the livesum gauges."""
    pool = app[health_key].runtime.db.pool

    metrics.PROCESSES.set(1)

    async def loop() -> None:
        while True:
            metrics.DB_POOL_IN_USE.set(len(pool._used))
            metrics.DB_POOL_SIZE.set(pool.size)
            await asyncio.sleep(1.0)

    task = asyncio.create_task(loop(), name="pool-sampler")
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    metrics.PROCESSES.set(0)


def install(root: web.Application, health: Health) -> None:
    """Routes, middleware and hooks on the root app (before it is frozen)."""
    root[health_key] = health
    root.middlewares.insert(0, observer(access_log=health.runtime.settings.access_log))
    root.on_response_prepare.append(add_request_id)
    root.router.add_get(METRICS_PATH, metrics_handler)
    root.router.add_get(LIVE_PATH, livez)
    root.router.add_get(READY_PATH, readyz)
    root.cleanup_ctx.append(sample_pool)
