"""The JMAP server as an aiohttp app: session, API, upload, download, EventSource.

``JmapService(runtime).create_app()`` serves, at absolute paths:

* ``GET /.well-known/jmap``: the session resource (RFC 8620 2);
* ``POST /jmap``: the API (RFC 8620 3);
* ``POST /jmap/upload/{accountId}``, ``GET /jmap/download/{accountId}/{blobId}/{name}``;
* ``GET /jmap/eventsource``: push (RFC 8620 7.3);
* ``GET /jmap/ws``: JMAP over WebSocket with push (RFC 8887).

The gateway mounts it in front of mail's catch-all (gateway/app.py);
``python -m mta jmap`` serves it alone. Every route authenticates
(mta/jmap/auth.py) and spends the principal's request budget
(``jmap:principal:<key>``, JMAP_REQUESTS_PER_MINUTE per minute); the API and
uploads also hold one of the principal's concurrent slots in this process.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from aiohttp import web

from common.jobs import Job
from common.openapi import FILES_PREFIX, array, integer, obj, operation, publish, string
from common.ratelimit import RateLimiter
from common.runtime import Runtime
from common.web import read_body
from mta.context import MtaContext
from mta.jmap import api, auth, blobs, push, session, websocket
from mta.jmap.catalog import load_methods
from mta.jmap.context import JmapContext
from mta.jmap.methods import prune_changes
from mta.jmap.openapi import DOCS_PATH, OPENAPI_PATH, PROFILE
from mta.jmap.registry import Principal

PRINCIPAL = web.RequestKey("jmap_principal", Principal)
PRUNE_JOB = "mta.jmap_prune"
PRUNE_EVERY_SECONDS = 3600
PATHS = ("/jmap", "/.well-known/jmap")


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    handler: str  # the JmapService method


ROUTES = (
    Route("GET", "/.well-known/jmap", "session"),
    Route("POST", "/jmap", "api"),
    Route("POST", "/jmap/upload/{accountId}", "upload"),
    Route("GET", "/jmap/download/{accountId}/{blobId}/{name}", "download"),
    Route("GET", "/jmap/eventsource", "eventsource"),
    Route("GET", "/jmap/ws", "websocket"),
)
# Served without credentials: the routes' own description.
PUBLIC = frozenset({OPENAPI_PATH, DOCS_PATH})
REQUEST = obj(
    {
        "using": array(string()),
        "methodCalls": array({"type": "array", "minItems": 3, "maxItems": 3}),
        "createdIds": obj(additional=string()),
    },
    required=["using", "methodCalls"],
    additional=True,
)


class Slots:
    """Concurrent requests (or uploads) per principal, in this process."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used: dict[str, int] = {}

    def take(self, key: str) -> bool:
        if self.used.get(key, 0) >= self.limit:
            return False
        self.used[key] = self.used.get(key, 0) + 1
        return True

    def give(self, key: str) -> None:
        left = self.used.get(key, 1) - 1
        if left <= 0:
            self.used.pop(key, None)
        else:
            self.used[key] = left


class JmapService:
    name = "jmap"

    def __init__(self, runtime: Runtime, mta: MtaContext | None = None) -> None:
        load_methods()
        self.runtime = runtime
        self.ctx = JmapContext.build(runtime, mta)
        self.limiter = RateLimiter(runtime.db, runtime.clock)
        self.auth = auth.Authenticator(self.ctx, self.limiter)
        self.hub = push.Hub(self.ctx)
        self.ctx.hub = self.hub
        self.requests = Slots(self.ctx.limits.max_concurrent_requests)
        self.uploads = Slots(self.ctx.limits.max_concurrent_upload)
        if PRUNE_JOB not in runtime.jobs.kinds:
            runtime.jobs.register(PRUNE_JOB, self._prune, every=PRUNE_EVERY_SECONDS)

    async def _prune(self, job: Job) -> None:
        await blobs.prune_uploads(self.ctx)
        async with self.runtime.db.connection() as conn:
            await prune_changes(
                conn, timedelta(days=self.ctx.limits.changes_keep_days), self.runtime.clock.now()
            )

    async def _end_streams(self, app: web.Application) -> None:
        self.hub.end_streams()

    def lifespan(self) -> AbstractAsyncContextManager[None] | None:
        return self._run()

    @asynccontextmanager
    async def _run(self) -> AsyncIterator[None]:
        await self.hub.start()
        try:
            yield
        finally:
            await self.hub.stop()

    def create_app(self, *, prefix: str = "") -> web.Application:
        app = web.Application(middlewares=[self._authenticate], client_max_size=1024**2)
        app.on_shutdown.append(self._end_streams)
        for route in ROUTES:
            app.router.add_route(route.method, route.path, getattr(self, route.handler))
        publish(app, PROFILE, json_path=OPENAPI_PATH, html_path=DOCS_PATH)
        return app

    # -- every request -----------------------------------------------------------------
    @web.middleware
    async def _authenticate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if request.method == "OPTIONS":
            return web.Response(status=204, headers=_cors(request))
        if request.path in PUBLIC or request.path.startswith(FILES_PREFIX):
            return await handler(request)
        try:
            principal = await self.auth.principal(request)
        except auth.AuthFailed as failed:
            failed.response.headers.update(_cors(request))
            return failed.response
        decision = await self.limiter.hit(
            f"jmap:principal:{principal.key}", self.ctx.limits.requests_per_minute, 60
        )
        if not decision.allowed:
            return auth.too_many(decision)
        request[PRINCIPAL] = principal
        response = await handler(request)
        if not response.prepared:
            response.headers.update(_cors(request))
        return response

    # -- routes ------------------------------------------------------------------------
    @operation(
        summary="The JMAP session: capabilities, accounts, URLs (RFC 8620 2)",
        response=obj(additional=True),
        auth="jmap",
    )
    async def session(self, request: web.Request) -> web.Response:
        body = session.session_object(request, self.ctx, request[PRINCIPAL])
        return web.json_response(body, headers={"Cache-Control": "no-cache, no-store"})

    @operation(
        summary="A JMAP request: method calls in order (RFC 8620 3)",
        body=REQUEST,
        body_required=True,
        response=obj({"methodResponses": array({"type": "array"})}, additional=True),
        auth="jmap",
    )
    async def api(self, request: web.Request) -> web.Response:
        principal: Principal = request[PRINCIPAL]
        limit = self.ctx.limits.max_size_request
        if not self.requests.take(principal.key):
            return api.RequestError(
                "limit",
                f"at most {self.ctx.limits.max_concurrent_requests} concurrent requests",
                limit="maxConcurrentRequests",
            ).response()
        try:
            if request.content_type != "application/json":
                raise api.RequestError("notJSON", "the request must be application/json")
            try:
                raw = await read_body(request, max_bytes=limit)
            except web.HTTPRequestEntityTooLarge:
                raise api.RequestError(
                    "limit", f"the request is larger than {limit} bytes", limit="maxSizeRequest"
                ) from None
            data = api.parse_request(raw, self.ctx)
            result = await api.run_request(
                data, self.ctx, principal, session.session_state(principal)
            )
        except api.RequestError as exc:
            return exc.response()
        finally:
            self.requests.give(principal.key)
        return web.json_response(result, headers={"Cache-Control": "no-cache, no-store"})

    def _account(self, request: web.Request) -> Any:
        account = request[PRINCIPAL].account(request.match_info["accountId"])
        if account is None:
            raise web.HTTPNotFound(text="no such account")
        return account

    @operation(
        summary="Upload a blob, streamed (RFC 8620 6.1)",
        body={"type": "string", "format": "binary"},
        body_media="application/octet-stream",
        body_required=False,
        status=201,
        response=obj(
            {"accountId": string(), "blobId": string(), "type": string(), "size": integer()},
            required=["accountId", "blobId", "type", "size"],
        ),
        auth="jmap",
    )
    async def upload(self, request: web.Request) -> web.Response:
        principal: Principal = request[PRINCIPAL]
        account = self._account(request)
        if not self.uploads.take(principal.key):
            return api.RequestError(
                "limit",
                f"at most {self.ctx.limits.max_concurrent_upload} concurrent uploads",
                status=429,
                limit="maxConcurrentUpload",
            ).response()
        try:
            result = await blobs.store_upload(
                self.ctx, account, request, max_size=self.ctx.limits.max_size_upload
            )
        except blobs.UploadTooLarge:
            return api.RequestError(
                "limit",
                f"uploads are at most {self.ctx.limits.max_size_upload} bytes",
                status=413,
                limit="maxSizeUpload",
            ).response()
        finally:
            self.uploads.give(principal.key)
        return web.json_response(result, status=201)

    @operation(
        summary="Download a blob, streamed, as an attachment (RFC 8620 6.2)",
        query={"type": string(max_length=200)},
        response={"type": "string", "format": "binary"},
        response_media="application/octet-stream",
        auth="jmap",
    )
    async def download(self, request: web.Request) -> web.StreamResponse:
        account = self._account(request)
        return await blobs.download(
            request, self.ctx, account, request.match_info["blobId"], request.match_info["name"]
        )

    @operation(
        summary="JMAP over WebSocket, subprotocol jmap (RFC 8887)",
        status=101,
        response={"type": "string"},
        response_media="text/plain",
        auth="jmap",
    )
    async def websocket(self, request: web.Request) -> web.StreamResponse:
        return await websocket.serve(request, self.ctx, self.hub, request[PRINCIPAL], self.limiter)

    @operation(
        summary="Push as server-sent events: state and ping (RFC 8620 7.3)",
        query={
            "types": string(max_length=500),
            "closeafter": string(enum=("state", "no")),
            "ping": string(pattern="^[0-9]{1,6}$"),
        },
        response={"type": "string"},
        response_media="text/event-stream",
        errors=(400,),
        auth="jmap",
    )
    async def eventsource(self, request: web.Request) -> web.StreamResponse:
        return await push.event_source(request, self.ctx, self.hub, request[PRINCIPAL])


def _cors(request: web.Request) -> dict[str, str]:
    """JMAP is meant for any client (RFC 8620 8.1): credentials are headers, never cookies."""
    return {
        "Access-Control-Allow-Origin": "*",
        "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
        "Access-Control-Allow-Headers": "Authorization, Content-Type, Accept, Last-Event-ID",
        "Access-Control-Max-Age": "86400",
    }


async def serve_forever(stop: asyncio.Event) -> None:  # pragma: no cover - see __main__
    await stop.wait()
