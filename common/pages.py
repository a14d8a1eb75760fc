"""The headers every page for people carries, in every service.

No inline script or style anywhere: every script and sheet is a file of this
origin. Pages fetch only their own origin (the API, the realtime socket:
'self' covers ws: and wss: of it), may not be framed (clickjacking of a
consent or publish button), post forms only to themselves, and are never
cached (they show who is signed in). A service adds image sources it needs
(the CMS admin previews uploads from blob: URLs) and frame sources (its
visual editor frames the site's pages).
"""

from __future__ import annotations


def page_headers(*, img_src: str = "'self' data:", frame_src: str | None = None) -> dict[str, str]:
    policy = "; ".join(
        (
            "default-src 'self'",
            *([f"frame-src {frame_src}"] if frame_src else []),
            "script-src 'self'",
            "style-src 'self'",
            f"img-src {img_src}",
            "connect-src 'self'",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        )
    )
    return {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        # Query strings (an OAuth state, a PKCE challenge) never leave the origin.
        "Referrer-Policy": "same-origin",
        # For browsers older than frame-ancestors.
        "X-Frame-Options": "DENY",
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cache-Control": "no-store",
    }
