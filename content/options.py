"""What a host passes when it creates the CMS application (docs/content.md, "Host API").

``ContentService(runtime, ContentOptions(visual=..., website=..., plugins=...,
design_surfaces=...))``: keyword
options, each optional, so a host passes only what it uses and later options
are added without touching the hosts that do not use them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from content.assistant.toolbox import Toolbox
    from content.design.surfaces import Surface
    from content.plugins import Plugin


@dataclass(frozen=True)
class ContentOptions:
    # Visual page definitions keyed by content-type name (spec, "Visual page
    # definition"); parsed and checked at start (content/visual/definitions.py).
    visual: Mapping[str, Any] | None = None
    # The website manifest {previewUrl, parts} (spec, "Website manifest";
    # content/visual/website.py).
    website: Mapping[str, Any] | None = None
    # Plugin objects of the host, loaded beside PLUGIN_DIR's (content/plugins/).
    plugins: Sequence[Plugin] = ()
    # The host's design surfaces (content/design/); a surface declared wrongly
    # stops the start with a DeclarationError.
    design_surfaces: Sequence[Surface] = ()
    # The assistant's toolbox; None: content.assistant.tools when present (toolbox.py).
    assistant_toolbox: Toolbox | None = None
