"""A form that reached the API without its script: a page, not a JSON error.

Every form of the pages posts to its API route (``action="/api/..."``,
``method="post"``, so nothing typed ever lands in a URL) and its screen
module sends it as JSON. When the module did not run (a network failure, a
blocked or stale script, a browser with scripts off), the browser posts the
form itself: a top-level navigation to /api, which no script of ours ever
makes (``fetch`` is ``Sec-Fetch-Mode: cors`` or ``same-origin``). Such a
request is answered here, before the rate limit and any handler, with a page
saying what happened and a way back; nothing is changed. GET navigations to
/api (a raw message download, the API's docs) are left alone.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from aiohttp import web

from common.web import Handler
from mail.pages.routes import render
from mail.pages.security import safe_next

API_PREFIX = "/api/"
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain")
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_form_navigation(request: web.Request) -> bool:
    """A browser posting a form to an API route as a page load, not a script's call."""
    if request.method in READ_METHODS or not request.path.startswith(API_PREFIX):
        return False
    mode = request.headers.get("Sec-Fetch-Mode")
    if mode is not None:
        return mode == "navigate"
    # Browsers without Fetch Metadata: a form's body and a page's Accept.
    return request.content_type in FORM_TYPES and "text/html" in request.headers.get("Accept", "")


def back_to(request: web.Request) -> str:
    """The page the form was on (same origin only), else the home page."""
    referer = urlsplit(request.headers.get("Referer", ""))
    if referer.netloc and referer.netloc != request.host:
        return "/"
    path = referer.path + (f"?{referer.query}" if referer.query else "")
    return safe_next(path)


@web.middleware
async def form_fallback_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not is_form_navigation(request):
        return await handler(request)
    response = render(
        request, "nojs.html", title="This page did not finish loading", back=back_to(request)
    )
    # The form was not accepted, and nothing was done: a client error, not an API answer.
    response.set_status(400)
    return response
