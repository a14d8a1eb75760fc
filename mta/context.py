"""What the mta's daemons and its store helpers are built with, once per process."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from common.clock import Clock
from common.runtime import Runtime
from mail.directory import ProvenSignIns
from mta.authentication.dns import Resolver
from mta.commit import GroupCommit
from mta.settings import MtaSettings, load_mta_settings
from mta.sieve.compiler import Script, compile_script
from mta.store.raw import RawMessages

SCRIPT_CACHE_SIZE = 1000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def script_version(updated_at: datetime) -> str:
    """A filter's version as the RCPT lookup reads it: microseconds since the epoch."""
    return str((updated_at - _EPOCH) // timedelta(microseconds=1))


@dataclass
class ScriptCache:
    """Compiled filters by (id, updated_at): a saved script is compiled once per process."""

    scripts: dict[tuple[str, str], Script] = field(default_factory=dict)

    def known(self, keys: Sequence[str]) -> list[tuple[str, Script]] | None:
        """The compiled scripts of ``keys`` ("id version", as the RCPT lookup reads
        them), or None unless every one was compiled before."""
        out = []
        for key in keys:
            filter_id, _, version = key.partition(" ")
            script = self.scripts.get((filter_id, version))
            if script is None:
                return None
            out.append((filter_id, script))
        return out

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
    # Passwords the mail apps' doors proved lately (mta/access/signin.py).
    proven: ProvenSignIns = field(default_factory=lambda: ProvenSignIns(Clock(), 0))

    @classmethod
    def build(cls, runtime: Runtime, config: MtaSettings | None = None) -> MtaContext:
        config = config or load_mta_settings(runtime.settings)
        return cls(
            runtime=runtime,
            config=config,
            blobs=RawMessages.of(runtime),
            resolver=Resolver(config.dns_resolvers, timeout=config.dns_timeout),
            committer=GroupCommit(runtime.db),
            proven=ProvenSignIns(runtime.clock, config.auth_cache_seconds),
        )
