"""The JSON shape of the site settings as the admin reads them (media as ids)."""

from __future__ import annotations

from typing import Any

from content.site.store import SiteSettings


def settings_json(settings: SiteSettings) -> dict[str, Any]:
    return {
        "title": settings.title,
        "tagline": settings.tagline,
        "description": settings.description,
        "logo": settings.logo,
        "socialImage": settings.social_image,
        "updatedAt": settings.updated_at,
    }
