"""Headers every admin page carries, and where a page may send you after signing in."""

from __future__ import annotations

from urllib.parse import urlsplit

# No inline script or style: every script and sheet is a built bundle of this
# origin (common/bundles.py). The API and the realtime socket are this origin
# too ('self' covers ws: and wss: of it); uploads are previewed from blob:
# URLs. Pages are never framed.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data: blob:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    # Pages show who is signed in: never cached.
    "Cache-Control": "no-store",
}

MAX_NEXT = 2000


def safe_next(raw: str | None, home: str) -> str:
    """A path of this mount to go to after signing in, or ``home``.

    Only ``/admin...`` paths are kept: no scheme, host, protocol-relative
    ``//host``, backslash or control character.
    """
    if not raw or len(raw) > MAX_NEXT or not raw.startswith(home):
        return home
    if any(ord(c) < 0x21 or c == "\\" for c in raw) or "//" in raw:
        return home
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc:
        return home
    return raw
