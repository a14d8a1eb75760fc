"""Static assets (CSS, JS modules) served by the mail service itself.

All assets share one version, the hash of their contents, in the URL:
``/assets/<version>/js/signin.js``. A page links the current version, which
is cached for a year as immutable; a module's relative import
(``./common.js``) resolves under the same version, so screens and their
helpers never mix releases. Any other version answers 404, and the
unversioned ``/assets/<name>`` form (for people and tools) is revalidated by
ETag. No asset comes from another origin.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

STATIC = Path(__file__).parent / "static"
PREFIX = "/assets"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
TYPES = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}


@dataclass(frozen=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


def _load(root: Path) -> tuple[dict[str, Asset], str]:
    found: dict[str, Asset] = {}
    whole = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        name = path.relative_to(root).as_posix()
        body = path.read_bytes()
        digest = hashlib.sha256(body).hexdigest()
        whole.update(name.encode() + b"\0" + digest.encode())
        kind = TYPES.get(path.suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
        found[name] = Asset(body, kind, f'"{digest[:20]}"')
    return found, whole.hexdigest()[:12]


# Read once at import: the files ship with the code and change only with it.
ASSETS, VERSION = _load(STATIC)


def url(name: str) -> str:
    """The cacheable URL of an asset; a missing name fails the render loudly."""
    if name not in ASSETS:
        raise KeyError(f"no asset {name!r}")
    return f"{PREFIX}/{VERSION}/{name}"


def respond(request: web.Request, name: str, *, immutable: bool) -> web.Response:
    asset = ASSETS.get(name)
    if asset is None:
        raise web.HTTPNotFound(text="no such asset")
    headers = {
        "ETag": asset.etag,
        "Cache-Control": IMMUTABLE if immutable else REVALIDATE,
        "X-Content-Type-Options": "nosniff",
    }
    if request.headers.get("If-None-Match") == asset.etag:
        return web.Response(status=304, headers=headers)
    return web.Response(body=asset.body, content_type=asset.content_type, headers=headers)
