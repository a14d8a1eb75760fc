"""The host's visual options, parsed: what the rest of the CMS asks of them."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from common.db import Conn
from content.options import ContentOptions
from content.visual import checks, website
from content.visual.definitions import VisualDefinition, parse_definitions
from content.visual.website import Website, parse_website

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HostVisual:
    definitions: Mapping[str, VisualDefinition] = field(default_factory=dict)
    website: Website | None = None

    @classmethod
    def from_options(cls, options: ContentOptions) -> HostVisual:
        """Raises VisualConfigError naming every problem: a wrong definition stops the start."""
        return cls(parse_definitions(options.visual), parse_website(options.website))

    def definition(self, type_name: str) -> VisualDefinition | None:
        return self.definitions.get(type_name)


async def report_visual_problems(conn: Conn, visual: HostVisual) -> list[str]:
    """At start: log each place the definitions and manifest disagree with the stored types.

    A warning, not a refusal: the types may be created after the host starts
    (a fresh install, the example host's seed), and a type changed later must
    not stop the site.
    """
    problems = await checks.startup_problems(conn, visual.definitions)
    if visual.website is not None:
        problems += await website.startup_problems(conn, visual.website)
    for problem in problems:
        log.warning("visual editing: %s", problem)
    return problems
