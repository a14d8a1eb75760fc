"""What every handler of one process reaches through its app: the service context."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from common.blobs import BlobStore
from common.clock import Clock
from common.db import Database
from common.ratelimit import RateLimiter
from common.runtime import Runtime
from content.changes import Changes
from content.settings import ContentSettings

if TYPE_CHECKING:
    from content.visual.definitions import VisualDefinition
    from content.visual.options import HostVisual


@dataclass(frozen=True)
class Context:
    runtime: Runtime
    # The CMS's own settings (content/settings.py); the process's are runtime.settings.
    config: ContentSettings
    limiter: RateLimiter
    changes: Changes
    # Media bytes: the STORAGE_DRIVER's store (content/media/storage.py).
    blobs: BlobStore
    # The mount prefix of this app ("" at the root, "/cms" under the gateway).
    prefix: str = ""
    # The host's visual definitions and website manifest (content/visual/);
    # None when the host passed none.
    visual: HostVisual | None = field(default=None)
    # The service's plugin registry (content/plugins/service.py ``Plugins``) and
    # design catalogue (content/design/service.py ``Catalogue``), set per app for
    # code that holds only the context (the assistant's tools). Typed loosely:
    # both modules import this one.
    plugins: Any = None
    design: Any = None

    def visual_definition(self, type_name: str) -> VisualDefinition | None:
        return self.visual.definition(type_name) if self.visual is not None else None

    @property
    def db(self) -> Database:
        return self.runtime.db

    @property
    def clock(self) -> Clock:
        return self.runtime.clock


CONTEXT = web.AppKey("content_context", Context)


def context(request: web.Request) -> Context:
    return request.app[CONTEXT]
