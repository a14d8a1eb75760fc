"""Headers every page carries, and the one rule for where a page may send you next."""

from __future__ import annotations

from urllib.parse import urlsplit

# No inline script or style anywhere: every script and sheet is a file under
# /assets. Pages fetch only their own origin (the API), may not be framed
# (clickjacking of the consent button), and post forms only to themselves.
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
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
    # The consent page's query (state, PKCE challenge) never leaves the origin.
    "Referrer-Policy": "same-origin",
    # For browsers older than frame-ancestors.
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    # Pages show who is signed in and carry OAuth parameters: never cached.
    "Cache-Control": "no-store",
}

HOME = "/"
MAX_NEXT = 4000


def safe_next(raw: str | None) -> str:
    """A same-origin relative path to go to after signing in, or the home page.

    Only ``/path?query`` is kept: no scheme, no host, no protocol-relative
    ``//host`` (nor ``/\\host``, which browsers read the same way), no
    control characters. Anything else is not an error, just ignored.
    """
    if not raw or len(raw) > MAX_NEXT or not raw.startswith("/"):
        return HOME
    if raw.startswith(("//", "/\\")) or any(ord(c) < 0x21 or c == "\\" for c in raw):
        return HOME
    parts = urlsplit(raw)
    if parts.scheme or parts.netloc:
        return HOME
    return raw
