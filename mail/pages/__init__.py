"""The mail host's pages for people: sign-up, sign-in, consent, pairing.

Server-rendered HTML shells (Jinja2 through aiohttp-jinja2) with small ES
modules, one per screen, that drive the existing /api and /oauth routes with
the svc_session cookie: the rules live once, in the API. Every page carries a
strict Content-Security-Policy (no inline script or style) and is kept out of
the OpenAPI document, which describes the API only (docs/mail.md, "Pages").
Pages and assets are not API calls and spend none of the API's rate limit
(mail/web/ratelimit.py); a form the browser posts itself, its script not
having run, gets a page from ``fallback.py`` rather than the API's JSON.
"""

from __future__ import annotations

import aiohttp_jinja2
import jinja2
from aiohttp import web

import mail.pages.hooks  # noqa: F401  (webhooks and recovery screens add themselves)
from mail.pages import (  # noqa: F401  (panel and webmail add their screens to routes)
    assets,
    panel,
    webmail,
)
from mail.pages.routes import routes


def install(app: web.Application) -> None:
    """Mount the pages and their assets on the mail application."""
    env = aiohttp_jinja2.setup(
        app,
        loader=jinja2.PackageLoader("mail.pages", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals["asset"] = assets.url
    app.add_routes(routes)
