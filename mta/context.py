"""What the mta's daemons and its store helpers are built with, once per process."""

from __future__ import annotations

from dataclasses import dataclass, field

from common.runtime import Runtime
from mta.authentication.dns import Resolver
from mta.commit import GroupCommit
from mta.settings import MtaSettings, load_mta_settings
from mta.sieve.compiler import Script, compile_script
from mta.store.raw import RawMessages

SCRIPT_CACHE_SIZE = 1000


@dataclass
class ScriptCache:
    """Compiled filters by (id, updated_at): a saved script is compiled once per process."""

    scripts: dict[tuple[str, str], Script] = field(default_factory=dict)

    def get(self, filter_id: str, version: str, text: str) -> Script:
        key = (filter_id, version)
        script = self.scripts.get(key)
        if script is None:
            script = compile_script(text)
            if len(self.scripts) >= SCRIPT_CACHE_SIZE:
                self.scripts.clear()
            self.scripts[key] = script
        return script


@dataclass
class MtaContext:
    runtime: Runtime
    config: MtaSettings
    blobs: RawMessages
    resolver: Resolver
    committer: GroupCommit
    scripts: ScriptCache = field(default_factory=ScriptCache)

    @classmethod
    def build(cls, runtime: Runtime, config: MtaSettings | None = None) -> MtaContext:
        config = config or load_mta_settings(runtime.settings)
        return cls(
            runtime=runtime,
            config=config,
            blobs=RawMessages.of(runtime),
            resolver=Resolver(config.dns_resolvers, timeout=config.dns_timeout),
            committer=GroupCommit(runtime.db),
        )
