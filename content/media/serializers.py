"""The JSON shape of a media record."""

from __future__ import annotations

from typing import Any

from content.media.store import Media


def media_json(media: Media) -> dict[str, Any]:
    return {
        "id": media.id,
        "filename": media.filename,
        "type": media.type,
        "size": media.size,
        "sha256": media.sha256,
        "width": media.width,
        "height": media.height,
        "alt": media.alt,
        "caption": media.caption,
        "folder": media.folder,
        "url": media.url,
        "uploadedBy": media.uploaded_by,
        "createdAt": media.created_at,
        "updatedAt": media.updated_at,
    }
