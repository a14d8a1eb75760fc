"""Cross-site request forgery: one predicate for every service with ambient credentials.

A state-changing request (anything but GET, HEAD, OPTIONS, TRACE) that a
browser could send from another site's page is refused unless it comes from
an allowed origin, as in Go's net/http ``CrossOriginProtection`` and OWASP's
"verify origin with standard headers", with an exact origin match:

1. ``Sec-Fetch-Site: same-origin`` (or ``none``, the person typed it) passes.
2. Otherwise ``Origin`` must be one of the allowed origins, compared as
   ``scheme://host[:port]`` with the scheme's default port dropped, so
   ``https://host`` is not ``http://host`` and ``:8443`` is not ``:443``.
   ``Origin: null`` (a sandboxed or privacy-stripped page) is refused.
3. Without ``Origin``, a ``Referer`` stands in for it (its origin must be
   allowed; a malformed one is refused).
4. With neither, a request that says it is cross-site or same-site by
   ``Sec-Fetch-Site`` is refused; one with no browser header at all is not
   from a browser (curl, a server) and passes, as it cannot carry a
   victim's cookie.

The caller decides whether the check applies: a request authenticated by a
credential the route accepts in a header (not ambient, a forged request
cannot add it) need not be checked; the mere presence of some
``Authorization`` header is not a reason to skip it. Bodies a page can send
without a CORS preflight (text/plain, forms, multipart) are never parsed as
JSON (``common.web.read_json_object``), the second layer.
"""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web
from yarl import URL

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


def origin_of(url: str) -> str | None:
    """``scheme://host[:port]`` of an http(s) URL, lower-cased, default port dropped."""
    try:
        parsed = URL(url.strip())
    except (ValueError, TypeError):
        return None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return None
    return str(parsed.origin())


def request_origin(request: web.Request) -> str | None:
    """The origin the request was addressed to (its scheme and Host header)."""
    return origin_of(f"{request.scheme}://{request.host}")


def allowed_origins(request: web.Request, configured: Iterable[str]) -> frozenset[str]:
    """The configured origins (PUBLIC_URL's and any trusted ones) and the request's own."""
    found = {origin_of(o) for o in configured} | {request_origin(request)}
    return frozenset(o for o in found if o is not None)


def is_cross_site(request: web.Request, configured: Iterable[str]) -> bool:
    """True when a state-changing request comes from a page of an origin not allowed."""
    if request.method in SAFE_METHODS:
        return False
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site in ("same-origin", "none"):
        return False
    claimed = request.headers.get("Origin")
    if claimed is None:
        claimed = request.headers.get("Referer")
    if claimed is None:
        # No origin to vouch for it: refused when a browser says it is not same-origin.
        return fetch_site is not None
    origin = origin_of(claimed)
    return origin is None or origin not in allowed_origins(request, configured)
