"""The CMS admin in the browser (/cms/admin; /admin under ``--only content``).

Server-rendered shells (content/admin/templates) with one bundled ES module
per screen (frontend/src/cms/screens/), driving the admin API with the
``cms_session`` cookie. The modules and their libraries are built by
`make assets` (frontend/README.md) and served from this app's own origin.
"""

from __future__ import annotations

import aiohttp_jinja2
import jinja2
from aiohttp import web

from content.admin.pages import overlay, routes

__all__ = ["install", "overlay"]


def install(app: web.Application) -> None:
    aiohttp_jinja2.setup(
        app,
        loader=jinja2.PackageLoader("content.admin", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    app.add_routes(routes)
