"""The admin's pages: HTML shells that one ES module per screen brings to life.

They are GET-only: every change goes through /api with the ``cms_session``
cookie, so the rules, the permission checks and the CSRF check live once, in
the API. A page is served only to a signed-in person (anyone else goes to
sign-in and comes back); while the site has no user at all every page leads
to the claim (``/admin/setup``, the spec's "the first visit claims the
site"). What a person may not do is left out of the navigation; the API
still decides.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import aiohttp_jinja2
from aiohttp import web

from common.bundles import BUNDLES, NotBuilt
from common.openapi import page
from common.pages import page_headers
from content.admin.security import IMG_SRC, PAGE_HEADERS, safe_next
from content.auth.credentials import cookie_principal
from content.auth.principal import Principal
from content.context import context
from content.people import service as people_service
from content.visual import service as visual_service
from content.visual.render import Overlay

routes = web.RouteTableDef()

ADMIN = "/admin"
ASSETS = ADMIN + "/assets"
ID = "{id:[A-Za-z0-9_-]{1,64}}"
TYPE_NAME = "{name:[a-z][a-zA-Z0-9_-]{0,63}}"


@dataclass(frozen=True)
class Section:
    href: str  # below /admin
    label: str
    permission: str
    group: str  # the heading it is listed under (GROUPS)


# The headings of the navigation, in order (Directus and Payload group theirs
# the same way: what editors touch daily first, the site's setup, then who may
# do what and what they did).
GROUPS = ("Content", "Site", "Administration")


# The navigation, in order; a new screen appends its section here.
NAV = (
    Section("/entries", "Entries", "content.read", "Content"),
    Section("/visual", "Visual editor", "content.write", "Content"),
    Section("/website", "Website parts", "content.read", "Content"),
    Section("/media", "Media", "content.read", "Content"),
    Section("/taxonomies", "Taxonomies", "content.read", "Content"),
    Section("/menus", "Menus", "content.read", "Content"),
    Section("/social", "Social", "social.write", "Content"),
    Section("/trash", "Trash", "content.write", "Content"),
    Section("/types", "Content types", "types.manage", "Site"),
    Section("/settings", "Site settings", "content.read", "Site"),
    Section("/design", "Design", "settings.manage", "Site"),
    Section("/plugins", "Plugins", "plugins.manage", "Site"),
    Section("/assistant", "Assistant settings", "settings.manage", "Site"),
    Section("/people", "People", "users.manage", "Administration"),
    Section("/keys", "Keys", "content.read", "Administration"),
    Section("/webhooks", "Webhooks", "webhooks.manage", "Administration"),
    Section("/activity", "Activity", "content.read", "Administration"),
)


def overlay(base: str) -> Overlay | None:
    """The visual preview's overlay on the admin's assets, ``base`` being PUBLIC_URL + mount;
    None (and the page still renders) when the bundles are not built."""
    try:
        return Overlay(
            script=f"{base}{ASSETS}/{BUNDLES.file_of('cms/visual-overlay.js')}",
            stylesheet=f"{base}{ASSETS}/{BUNDLES.file_of('cms/visual-overlay.css')}",
        )
    except NotBuilt:
        return None


def _bundle_url(prefix: str) -> Callable[[str], str]:
    def url(entry: str) -> str:
        return f"{prefix}{ASSETS}/{BUNDLES.file_of(entry)}"

    return url


def render(
    request: web.Request,
    screen: str,
    title: str,
    principal: Principal | None,
    headers: dict[str, str] = PAGE_HEADERS,
    **data: str,
) -> web.Response:
    """The shell of one screen: its module is ``frontend/src/cms/screens/<screen>.js``."""
    prefix = context(request).prefix
    admin = prefix + ADMIN
    path = request.path.removeprefix(prefix)
    # [(heading, [link, ...])], each heading with at least one link the person may open.
    nav: list[tuple[str, list[dict[str, Any]]]] = []
    if principal is not None:
        for group in GROUPS:
            links = [
                {
                    "href": prefix + ADMIN + s.href,
                    "label": s.label,
                    "current": path == ADMIN + s.href or path.startswith(ADMIN + s.href + "/"),
                    "exact": path == ADMIN + s.href,
                }
                for s in NAV
                if s.group == group and principal.can(s.permission)
            ]
            if links:
                nav.append((group, links))
    attributes = {
        "screen": screen,
        "api": prefix + "/api",
        "admin": admin,
        "prefix": prefix,
        **data,
    }
    if principal is not None:
        attributes.update(
            user=json.dumps(
                {
                    "id": principal.user.id,
                    "name": principal.user.name,
                    "email": principal.user.email,
                    "role": principal.user.role,
                    "permissions": sorted(principal.permissions),
                }
            )
        )
    try:
        html = (
            aiohttp_jinja2.get_env(request.app)
            .get_template("admin.html")
            .render(
                title=title,
                screen=screen,
                admin=admin,
                nav=nav,
                user=principal.user if principal else None,
                attributes=attributes,
                bundle=_bundle_url(prefix),
            )
        )
    except NotBuilt as exc:
        return web.Response(
            status=503, text=f"The admin is not built yet: {exc}\n", headers=PAGE_HEADERS
        )
    return web.Response(text=html, content_type="text/html", headers=headers)


async def _site_claimed(request: web.Request) -> bool:
    return not await people_service.setup_required(context(request))


def _go(request: web.Request, to: str) -> web.HTTPSeeOther:
    return web.HTTPSeeOther(context(request).prefix + to, headers=PAGE_HEADERS)


Screen = Callable[[web.Request, Principal], Awaitable[web.StreamResponse]]


def signed_in(handler: Screen) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """A screen for a signed-in person; others sign in (or claim the site) first."""

    async def guarded(request: web.Request) -> web.StreamResponse:
        principal = await cookie_principal(request)
        if principal is None:
            if not await _site_claimed(request):
                raise _go(request, ADMIN + "/setup")
            here = request.path_qs.removeprefix(context(request).prefix)
            raise _go(request, ADMIN + "/signin?" + urlencode({"next": here}))
        return await handler(request, principal)

    guarded.__name__ = handler.__name__
    guarded.__doc__ = handler.__doc__
    return guarded


# --- signing in -----------------------------------------------------------------


@routes.get(ADMIN + "/setup")
@page
async def setup(request: web.Request) -> web.StreamResponse:
    """The first visit claims the site: it creates the first owner (spec)."""
    if await _site_claimed(request):
        raise _go(request, ADMIN + "/signin")
    return render(request, "setup", "Claim this site", None)


@routes.get(ADMIN + "/signin")
@page
async def signin(request: web.Request) -> web.StreamResponse:
    if not await _site_claimed(request):
        raise _go(request, ADMIN + "/setup")
    after = safe_next(request.query.get("next"), ADMIN)
    if await cookie_principal(request) is not None:
        raise _go(request, after)
    return render(request, "signin", "Sign in", None, next=context(request).prefix + after)


@routes.get(ADMIN)
@routes.get(ADMIN + "/")
@page
@signed_in
async def home(request: web.Request, principal: Principal) -> web.StreamResponse:
    raise _go(request, ADMIN + "/entries")


# --- screens ----------------------------------------------------------------------


def _simple(path: str, screen: str, title: str) -> None:
    async def handler(request: web.Request, principal: Principal) -> web.StreamResponse:
        return render(request, screen, title, principal)

    handler.__name__ = screen.replace("-", "_")
    routes.get(ADMIN + path)(page(signed_in(handler)))


for _path, _screen, _title in (
    ("/entries", "entries", "Entries"),
    ("/website", "website", "Website parts"),
    ("/design", "design", "Design"),
    ("/plugins", "plugins", "Plugins"),
    ("/types", "types", "Content types"),
    ("/types/new", "type", "New content type"),
    ("/media", "media", "Media"),
    ("/taxonomies", "taxonomies", "Taxonomies"),
    ("/menus", "menus", "Menus"),
    ("/trash", "trash", "Trash"),
    ("/settings", "settings", "Site settings"),
    ("/people", "people", "People"),
    ("/keys", "keys", "Keys"),
    ("/webhooks", "webhooks", "Webhooks"),
    ("/activity", "activity", "Activity"),
    ("/assistant", "assistant", "Assistant settings"),
    ("/account", "account", "Your account"),
):
    _simple(_path, _screen, _title)


@routes.get(ADMIN + "/visual")
@page
@signed_in
async def visual(request: web.Request, principal: Principal) -> web.StreamResponse:
    """The visual editor frames the site's pages: its own origin, and the origins of
    the visual types' absolute preview addresses."""
    origins = await visual_service.preview_origins(context(request))
    headers = page_headers(img_src=IMG_SRC, frame_src=" ".join(["'self'", *origins]))
    return render(request, "visual", "Visual editor", principal, headers)


@routes.get(ADMIN + "/types/" + TYPE_NAME)
@page
@signed_in
async def type_edit(request: web.Request, principal: Principal) -> web.StreamResponse:
    name = request.match_info["name"]
    return render(request, "type", "Content type", principal, type=name)


@routes.get(ADMIN + "/entries/new")
@page
@signed_in
async def entry_new(request: web.Request, principal: Principal) -> web.StreamResponse:
    kind = request.query.get("type", "")[:64]
    return render(request, "entry", "New entry", principal, type=kind, entry="")


@routes.get(ADMIN + "/entries/" + ID)
@page
@signed_in
async def entry_edit(request: web.Request, principal: Principal) -> web.StreamResponse:
    return render(request, "entry", "Entry", principal, entry=request.match_info["id"], type="")


# --- social -----------------------------------------------------------------------
# One top-level section; the social screens link to each other (lib/social.js),
# settings and accounts only for admins (social.manage).

for _path, _screen, _title in (
    ("/social", "social", "Social"),
    ("/social/posts", "social-posts", "Social posts"),
    ("/social/calendar", "social-calendar", "Social calendar"),
    ("/social/settings", "social-settings", "Social networks"),
):
    _simple(_path, _screen, _title)


@routes.get(ADMIN + "/social/posts/new")
@page
@signed_in
async def social_post_new(request: web.Request, principal: Principal) -> web.StreamResponse:
    return render(request, "social-post", "New social post", principal, post="")


@routes.get(ADMIN + "/social/posts/" + ID)
@page
@signed_in
async def social_post_edit(request: web.Request, principal: Principal) -> web.StreamResponse:
    return render(request, "social-post", "Social post", principal, post=request.match_info["id"])


@routes.get(ASSETS + "/{name:.+}")
@page
async def bundle(request: web.Request) -> web.StreamResponse:
    return BUNDLES.respond(request.match_info["name"])
