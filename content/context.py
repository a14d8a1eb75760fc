"""What every handler of one process reaches through its app: the service context."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from common.blobs import BlobStore
from common.clock import Clock
from common.db import Database
from common.ratelimit import RateLimiter
from common.runtime import Runtime
from content.changes import Changes
from content.settings import ContentSettings


@dataclass(frozen=True)
class Context:
    runtime: Runtime
    settings: ContentSettings
    limiter: RateLimiter
    changes: Changes
    # Media bytes: the STORAGE_DRIVER's store (content/media/storage.py).
    blobs: BlobStore
    # The mount prefix of this app ("" at the root, "/cms" under the gateway).
    prefix: str = ""

    @property
    def db(self) -> Database:
        return self.runtime.db

    @property
    def clock(self) -> Clock:
        return self.runtime.clock


CONTEXT = web.AppKey("content_context", Context)


def context(request: web.Request) -> Context:
    return request.app[CONTEXT]
