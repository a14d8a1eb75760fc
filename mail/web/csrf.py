"""Cross-site request forgery defence for state-changing browser requests.

Two layers:

1. The svc_session cookie is SameSite=Lax, so browsers do not attach it to
   cross-site POST, PUT, PATCH or DELETE requests at all.
2. Every such request must come from our own origin by the shared predicate
   (``common.csrf``): PUBLIC_URL's origin, one of TRUSTED_ORIGINS, or the
   request's own, matched exactly (scheme, host and port), by ``Origin`` or,
   without it, ``Referer``. The one credential mail takes in a header is the
   sending API's key (``Authorization: Bearer re_...``, mail/apikeys/access.py):
   a request it authenticates (``Auth.session`` is None) is exempt, as a key
   is not ambient; a bad key is refused (403 invalid_api_key) before any
   handler, and any other header exempts nothing. Login and sign-up are
   covered too (login CSRF).

JSON bodies sent as text/plain (or any other type a page can send without a
CORS preflight) are refused unparsed by ``common.web.read_json_object``.
Refusal is ``403 forbidden``.
"""

from __future__ import annotations

from aiohttp import web

from common.csrf import is_cross_site
from common.web import Handler
from mail.auth.sessions import current
from mail.context import MailContext, mail_context
from mail.errors import forbidden


def is_cross_site_forgery(ctx: MailContext, request: web.Request) -> bool:
    auth = current(request)
    if auth is not None and auth.session is None:
        return False  # authenticated by a header credential, not by the cookie
    return is_cross_site(request, (ctx.settings.public_origin, *ctx.config.trusted_origins))


@web.middleware
async def csrf_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if is_cross_site_forgery(mail_context(request), request):
        raise forbidden("cross-origin request refused")
    return await handler(request)
