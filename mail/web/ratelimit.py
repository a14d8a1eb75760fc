"""Request rate limits of the API, one budget shared by every gateway process.

What is limited: API calls. Every request that reaches an API route (``/api``,
the discovery and well-known routes, and any path no route matches) spends
one request of its principal's token bucket: the signed-in account
(``mail:account:<id>``) or API key's account, the webmail mailbox
(``mail:mailbox:<id>``), else the client IP (``mail:ip:<ip>``). The bucket
refills at RATE_LIMIT_PER_SECOND (the spec's 10 per second, sustained) and
holds RATE_LIMIT_BURST requests (20), so a screen that loads a few things at
once after a quiet moment is never refused while a client that keeps going
is held to the rate. Sign-in, sign-up and the password-reset routes also
spend ``mail:auth-ip:<ip>``, AUTH_RATE_LIMIT_PER_SECOND (5) per one-second
window, the counter JMAP's failed sign-ins spend too. Both live in Postgres
(common.ratelimit), so N processes behind a load balancer share them.

What is not: the pages for people and their assets (handlers marked
:func:`common.openapi.page`: HTML shells, ``/assets/...``, the webmail
reading frame) and the reading frame's signed part URLs (its images). They
are not API calls: a browser fetches them to show a screen, assets are
cached for a year, and a page's own API calls are what the budget is for.
docs/mail.md, "Rate limits", says the same.

Every limited response carries ratelimit-limit, ratelimit-remaining,
ratelimit-reset and ratelimit-policy for the tightest budget involved; a
refusal is 429 ``rate_limit_exceeded`` with retry-after as well.
"""

from __future__ import annotations

from aiohttp import web

from common.client_ip import client_ip
from common.openapi import is_page
from common.ratelimit import Decision
from common.web import Handler
from mail.auth.sessions import AUTH
from mail.context import MailContext, mail_context
from mail.errors import rate_limit_exceeded
from mail.webmail import messages
from mail.webmail.sessions import WEBMAIL

# POST paths limited per IP as sign-in attempts (credential guessing, mail bombing).
AUTH_PATHS = frozenset(
    {
        "/api/auth/login",
        "/api/auth/signup",
        "/api/auth/password/forgot",
        "/api/auth/password/reset",
        "/api/mail/login",
        "/api/recover/request",
        "/api/recover/reset",
    }
)


def principal_key(request: web.Request, ip: str) -> str:
    auth = request.get(AUTH)
    if auth is not None:
        return f"mail:account:{auth.account.id}"
    webmail = request.get(WEBMAIL)
    if webmail is not None:
        return f"mail:mailbox:{webmail.address_id}"
    return f"mail:ip:{ip}"


def is_api_call(request: web.Request) -> bool:
    """Whether the request spends the API's budget: anything but a page or its resources."""
    if is_page(request.match_info.handler):
        return False
    # The reading frame's images carry a signature the server made for that
    # frame (mail/webmail/messages.py part_url): resources of a page.
    info = request.match_info
    if "signature" in request.query and "section" in info and "message_id" in info:
        ctx = mail_context(request)
        found = messages.signed_mailbox(ctx, info["message_id"], info["section"], request.query)
        return found is None
    return True


async def spend(ctx: MailContext, key: str) -> Decision:
    """One request from ``key``'s bucket of the API's rate; raises 429 when it is empty."""
    config = ctx.config
    decision = await ctx.limiter.take(key, config.rate_limit_per_second, config.rate_limit_burst)
    if not decision.allowed:
        raise rate_limit_exceeded(decision.headers())
    return decision


@web.middleware
async def rate_limit_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not is_api_call(request):
        return await handler(request)
    ctx = mail_context(request)
    ip = client_ip(request, ctx.settings.trusted_proxies)
    decision = await spend(ctx, principal_key(request, ip))
    if request.method == "POST" and request.path in AUTH_PATHS:
        # A one-second window, not a bucket: JMAP's failed sign-ins spend the same
        # counter (mta/jmap/auth.py peeks at it before checking a password).
        rate = ctx.config.auth_rate_limit_per_second
        decision = await ctx.limiter.hit(f"mail:auth-ip:{ip}", rate)
        if not decision.allowed:
            raise rate_limit_exceeded(decision.headers())
    response = await handler(request)
    _add_headers(response, decision)
    return response


def _add_headers(response: web.StreamResponse, decision: Decision) -> None:
    if not response.prepared:
        response.headers.update(decision.headers())
