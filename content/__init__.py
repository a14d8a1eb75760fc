"""The content management service (CMS)."""

from content.service import MIGRATIONS, ContentService

__all__ = ["MIGRATIONS", "ContentService"]
