"""What the JMAP server is built with, once per process."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from common.runtime import Runtime
from mta.context import MtaContext
from mta.jmap.settings import JmapSettings, load_jmap_settings
from mta.store.raw import RawMessages


@dataclass
class JmapContext:
    runtime: Runtime
    mta: MtaContext
    limits: JmapSettings
    # The process's push hub (mta/jmap/push.py), set while the service runs.
    hub: Any = None

    @property
    def blobs(self) -> RawMessages:
        """Raw MIME of stored mail and uploaded blobs (sha-256 ids, inline or files)."""
        return self.mta.blobs

    @classmethod
    def build(cls, runtime: Runtime, mta: MtaContext | None = None) -> JmapContext:
        return cls(
            runtime=runtime,
            mta=mta or MtaContext.build(runtime),
            limits=load_jmap_settings(runtime.settings),
        )
