"""The JSON of a socket ticket."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit


def socket_url(public_url: str, prefix: str, ticket: str) -> str:
    """ws(s)://<PUBLIC_URL host><prefix>/realtime?ticket=..."""
    parts = urlsplit(public_url)
    scheme = "wss" if parts.scheme == "https" else "ws"
    path = parts.path.rstrip("/") + prefix + "/realtime"
    return urlunsplit((scheme, parts.netloc, path, f"ticket={ticket}", ""))


def ticket_json(ticket: str, expires_at: datetime, url: str) -> dict[str, Any]:
    return {"ticket": ticket, "expiresAt": expires_at, "url": url}
