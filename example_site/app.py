"""The example host's pages: delivery reads, a template, render_visual, the right headers.

What a host of the CMS does for every page (docs/content.md, "Host API"):

1. Read the page's entry and the shared parts (menu, settings, the footer's
   single-kind entry) as the delivery API answers them (``service.reader()``,
   content/host.py), through a small cache tied to
   ``service.content_version()``: the version is captured before a read and
   the answer kept only if it did not move meanwhile.
2. With ``?preview=<token>``, read the snapshot the token holds instead of the
   published entry, for this request only; ``&visual=1`` on a valid token
   turns on editing mode. The answer is then ``Cache-Control: no-store`` and
   ``X-Robots-Tag: noindex, nofollow``.
3. Render the template, then ``render_visual(html, definition, layout,
   editing)`` arranges the declared sections by the entry's
   ``data.__layout`` and, in editing mode, marks them for the admin.

Never a cookie; the Content-Security-Policy allows no inline script or style,
and lets only this origin and the CMS admin's frame the pages.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web
from markupsafe import Markup

from content import ContentService
from content.host import SiteReader
from content.visual.render import clean_formatted
from example_site.model import PREFIX, WEBSITE
from example_site.seed import seed

HERE = Path(__file__).parent
MAX_ANSWERS = 1000
SERVICE = web.AppKey("example_site_service", ContentService)

_templates = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)


class VersionedReads:
    """Delivery answers kept until the content version moves (spec, "Cache refresh")."""

    def __init__(self, version: Callable[[], int]) -> None:
        self.version = version
        self.seen = version()
        self.answers: dict[str, Any] = {}

    async def get(self, key: str, read: Callable[[], Awaitable[Any]]) -> Any:
        now = self.version()
        if now != self.seen:
            self.answers.clear()
            self.seen = now
        if key in self.answers:
            return self.answers[key]
        answer = await read()
        # Kept only if nothing changed while it was read; a miss (None) is not
        # kept, so made-up addresses cannot fill the cache.
        if answer is not None and self.version() == now:
            if len(self.answers) >= MAX_ANSWERS:
                self.answers.clear()
            self.answers[key] = answer
        return answer


READS = web.AppKey("example_site_reads", VersionedReads)


async def _shared(reader: SiteReader, reads: VersionedReads) -> dict[str, Any]:
    async def read() -> dict[str, Any]:
        menu = await reader.menu("main")
        return {
            "settings": await reader.settings(),
            # A menu nobody saved yet shows the manifest's default links.
            "menu": menu["items"] if menu else WEBSITE["parts"][0]["source"]["defaults"],
            "footer": await reader.single("footer"),
            "features": await reader.entries("feature", sort=("title", False)),
        }

    return dict(await reads.get("shared", read))


async def _person(reader: SiteReader, reads: VersionedReads, slug: Any) -> dict[str, Any] | None:
    if not isinstance(slug, str) or not slug:
        return None
    return await reads.get(f"person:{slug}", lambda: reader.entry("person", slug))


async def _page_entry(
    reader: SiteReader, reads: VersionedReads, slug: str, token: str | None
) -> tuple[dict[str, Any] | None, bool]:
    """The page's entry and whether it comes from a valid preview token."""
    if token:
        snapshot = await reader.preview(token)
        if snapshot is not None and snapshot["type"] == "page":
            return snapshot, True

    async def read() -> dict[str, Any] | None:
        return await reader.entry("page", slug)

    return await reads.get(f"page:{slug}", read), False


def _headers(request: web.Request, *, preview: bool, editing: bool = False) -> dict[str, str]:
    admin = request.app[SERVICE].runtime.settings.public_origin
    # Editing mode links the admin's overlay, a script and a sheet of the CMS's
    # origin (which may not be this one); the public page runs no script at all.
    overlay = f" {admin}" if editing else ""
    headers = {
        "Content-Security-Policy": "; ".join(
            (
                "default-src 'self'",
                f"script-src 'self'{overlay}",
                f"style-src 'self'{overlay}",
                "img-src 'self' data: " + admin,
                "object-src 'none'",
                "base-uri 'none'",
                "form-action 'none'",
                # The CMS admin frames the preview to edit it in place.
                f"frame-ancestors 'self' {admin}",
            )
        ),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
    }
    if preview:
        # A preview is one editor's unsaved page: never stored, never indexed.
        headers["Cache-Control"] = "no-store"
        headers["X-Robots-Tag"] = "noindex, nofollow"
    else:
        headers["Cache-Control"] = "public, no-cache"
    return headers


async def page(request: web.Request) -> web.Response:
    service = request.app[SERVICE]
    reader, reads = service.reader(), request.app[READS]
    slug = request.match_info.get("slug") or "home"
    token = request.query.get("preview")
    entry, previewing = await _page_entry(reader, reads, slug, token)
    if entry is None:
        raise web.HTTPNotFound(text="no such page")
    # Editing mode: only a valid preview token together with visual=1.
    editing = previewing and request.query.get("visual") == "1"
    data = entry["data"]
    html = _templates.get_template("page.html").render(
        prefix=PREFIX,
        entry=entry,
        data=data,
        # Stored cleaned already (text, i, br); cleaned again, as output is the last line.
        intro=Markup(clean_formatted(str(data.get("intro") or ""))),  # noqa: S704 (nh3-cleaned)
        # The reference field holds the chosen person's slug.
        author=await _person(reader, reads, data.get("author")),
        **await _shared(reader, reads),
    )
    definition = service.visual.definition("page")
    assert definition is not None
    body = service.render_visual(html, definition, data.get("__layout"), editing=editing)
    # Any ?preview=, valid or not, is answered as a preview: such a URL is never cached.
    headers = _headers(request, preview=bool(token), editing=editing)
    return web.Response(text=body, content_type="text/html", headers=headers)


async def stylesheet(request: web.Request) -> web.FileResponse:
    return web.FileResponse(
        HERE / "static" / "site.css",
        headers={"Cache-Control": "public, max-age=300", "X-Content-Type-Options": "nosniff"},
    )


def create_site(service: ContentService) -> web.Application:
    """The site's routes, mounted under /site (gateway/app.py in development)."""
    app = web.Application()
    app[SERVICE] = service
    app[READS] = VersionedReads(service.content_version)
    app.router.add_get("/static/site.css", stylesheet)
    app.router.add_get("/", page)
    app.router.add_get("/{slug:[a-z0-9-]+}", page)
    return app


def first_run(service: ContentService) -> Callable[[web.Application], AsyncIterator[None]]:
    """A cleanup context creating the example content in development, put before
    the CMS's own lifespan so its start-up checks see the seeded types."""

    async def run(app: web.Application) -> AsyncIterator[None]:
        if service.runtime.settings.is_development:
            await seed(service.context)
        yield

    return run
