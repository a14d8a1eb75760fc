"""Cross-site request forgery defence for state-changing browser requests.

Two layers, as in Go's net/http CrossOriginProtection and OWASP's "verify
origin with standard headers":

1. The svc_session cookie is SameSite=Lax, so browsers do not attach it to
   cross-site POST, PUT, PATCH or DELETE requests at all.
2. Every such request that does not carry its own ``Authorization`` header
   (an API key is not ambient, a forged request cannot add it) must come from
   our own origin: ``Sec-Fetch-Site`` of ``same-origin`` or ``none`` passes;
   otherwise an ``Origin`` (or, without it, a ``Referer``) must name
   PUBLIC_URL's origin, the request's own host, or one of TRUSTED_ORIGINS.
   A request with none of these headers is not from a modern browser (curl,
   a server) and passes; it cannot carry a victim's cookie cross-site anyway.

Refusal is ``403 forbidden``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from aiohttp import web

from common.web import Handler
from mail.context import MailContext, mail_context
from mail.errors import forbidden

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


def _origin_of(url: str) -> str | None:
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower()


def allowed_origin(ctx: MailContext, request: web.Request, origin: str) -> bool:
    origin = origin.lower().rstrip("/")
    if origin == ctx.settings.public_origin.lower() or origin in ctx.config.trusted_origins:
        return True
    # Same host as the request itself (a host mount, or a proxy that keeps Host).
    return urlsplit(origin).netloc == request.host.lower()


def is_cross_site_forgery(ctx: MailContext, request: web.Request) -> bool:
    if request.method in SAFE_METHODS or "Authorization" in request.headers:
        return False
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site in ("same-origin", "none"):
        return False
    origin = request.headers.get("Origin")
    if origin is not None:
        return origin == "null" or not allowed_origin(ctx, request, origin)
    referer = request.headers.get("Referer")
    if referer is not None:
        referer_origin = _origin_of(referer)
        return referer_origin is None or not allowed_origin(ctx, request, referer_origin)
    # cross-site or same-site by Sec-Fetch-Site, and no origin to vouch for it.
    return fetch_site is not None


@web.middleware
async def csrf_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if is_cross_site_forgery(mail_context(request), request):
        raise forbidden("cross-origin request refused")
    return await handler(request)
