"""Request rate limits, one budget shared by every gateway process.

Every mail request spends one unit of its principal's budget: the signed-in
account (``mail:account:<id>``), or the client IP when unauthenticated
(``mail:ip:<ip>``), RATE_LIMIT_PER_SECOND per second. Sign-in, sign-up and
the password-reset routes also spend from ``mail:auth-ip:<ip>``,
AUTH_RATE_LIMIT_PER_SECOND (5) per second. The counters live in Postgres
(common.ratelimit), so N processes behind a load balancer share them.

Every response carries ratelimit-limit, ratelimit-remaining and
ratelimit-reset for the tightest budget involved; a refusal is 429
``rate_limit_exceeded`` with retry-after as well.
"""

from __future__ import annotations

from aiohttp import web

from common.client_ip import client_ip
from common.ratelimit import Decision
from common.web import Handler
from mail.auth.sessions import AUTH
from mail.context import mail_context
from mail.errors import rate_limit_exceeded
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


@web.middleware
async def rate_limit_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    ctx = mail_context(request)
    ip = client_ip(request, ctx.settings.trusted_proxies)
    decision = await ctx.limiter.hit(principal_key(request, ip), ctx.config.rate_limit_per_second)
    if decision.allowed and request.method == "POST" and request.path in AUTH_PATHS:
        decision = await ctx.limiter.hit(
            f"mail:auth-ip:{ip}", ctx.config.auth_rate_limit_per_second
        )
    if not decision.allowed:
        raise rate_limit_exceeded(decision.headers())
    response = await handler(request)
    _add_headers(response, decision)
    return response


def _add_headers(response: web.StreamResponse, decision: Decision) -> None:
    if not response.prepared:
        response.headers.update(decision.headers())
