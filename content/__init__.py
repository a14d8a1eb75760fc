"""The content management service (CMS), a library its host embeds (docs/content.md, "Host API")."""

from content.options import ContentOptions
from content.service import MIGRATIONS, ContentService
from content.visual.render import render_visual

__all__ = ["MIGRATIONS", "ContentOptions", "ContentService", "render_visual"]
