"""Path and host rules for the sub-apps that do not sit under a plain prefix.

aiohttp refuses an empty sub-app prefix, so the root catch-all (mail) and the
multi-prefix OAuth mount are MatchedSubAppResources with rules of their own.
aiohttp resolves such resources before every other route, so the catch-all
must decline every path another mount owns, or it would swallow them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aiohttp import web
from aiohttp.web_urldispatcher import AbstractRuleMatching, MatchedSubAppResource


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


class PathPrefixes(AbstractRuleMatching):
    """Matches requests whose path is, or is below, one of the prefixes."""

    def __init__(self, prefixes: Iterable[str]) -> None:
        super().__init__()
        self.prefixes = tuple(prefixes)

    async def match(self, request: web.Request) -> bool:
        path = request.rel_url.path
        return any(_under(path, p) for p in self.prefixes)

    def get_info(self) -> Any:  # aiohttp's _InfoDict is private
        return {"prefixes": self.prefixes}

    @property
    def canonical(self) -> str:
        return "|".join(self.prefixes)


class Everything(AbstractRuleMatching):
    """Matches every path except those below the excluded prefixes."""

    def __init__(self, excluded: Iterable[str]) -> None:
        super().__init__()
        self.excluded = tuple(excluded)

    async def match(self, request: web.Request) -> bool:
        path = request.rel_url.path
        return not any(_under(path, p) for p in self.excluded)

    def get_info(self) -> Any:  # aiohttp's _InfoDict is private
        return {"excluding": self.excluded}

    @property
    def canonical(self) -> str:
        return "*"


def mount_by_rule(root: web.Application, rule: AbstractRuleMatching, app: web.Application) -> None:
    # Application._add_subapp is what add_domain() uses: it also wires the
    # sub-app's startup/cleanup signals, which registering the resource alone would not.
    root._add_subapp(lambda: MatchedSubAppResource(rule, app), app)
