"""The page routes: HTML shells that the screen modules bring to life.

They are GET-only: every change goes through the API (/api for the panel,
/oauth for consent), so the rules and their CSRF checks live in one place.
Each handler is marked :func:`common.openapi.page`, which keeps it out of
the API's OpenAPI document.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

import aiohttp_jinja2
from aiohttp import web

from common.openapi import page
from mail.auth.sessions import current
from mail.errors import MailError
from mail.pages import assets, hosting
from mail.pages.security import PAGE_HEADERS, safe_next

routes = web.RouteTableDef()

# The panel's sections in the navigation, in order: a new screen appends its
# (href, label) here. The entry whose href is the longest prefix of the page's
# path is the current one (/account/sessions is under Account).
NAV: list[tuple[str, str]] = [
    ("/", "Overview"),
    ("/domains", "Domains"),
    ("/filters", "Filters"),
    ("/account", "Account"),
    ("/referrals", "Referrals"),
    # Sending (docs/mail.md, "Sending API"): sent email, API keys, suppressions.
    ("/emails", "Sent email"),
    ("/api-keys", "API keys"),
    ("/suppressions", "Suppressions"),
    ("/transfers", "Transfers"),
    ("/webhooks", "Webhooks"),
    # Plans, usage, subscription, payment methods, transactions, tax id (mail/billing/).
    ("/billing", "Billing"),
    # The OAuth server's clients (oauth/, /admin/oauth/clients): the instance owner's only.
    ("/oauth-clients", "OAuth apps"),
]

# Sections only the instance owner sees (and may open).
OWNER_ONLY = frozenset({"/oauth-clients"})

# The navigation shows NAV in a few groups, so twelve sections read at a
# glance: a disclosure menu each at wide widths, one Menu button on a phone,
# and without scripts the same groups as plain lists of links (static/js/nav.js).
# Every NAV href is in exactly one group (tests/mail/test_panel_pages.py).
NAV_GROUPS: list[tuple[str, tuple[str, ...]]] = [
    ("Mail", ("/", "/domains", "/filters", "/transfers")),
    ("Sending", ("/emails", "/api-keys", "/suppressions", "/webhooks")),
    ("Account", ("/account", "/billing", "/referrals", "/oauth-clients")),
]


# Pages whose path is not below their section's href: an address lives on a domain.
SECTION_OF_PREFIX = {"/addresses": "/domains"}


def section_of(path: str) -> str:
    """The NAV href a page belongs to: its own, or the longest one above it."""
    for prefix, section in SECTION_OF_PREFIX.items():
        if path == prefix or path.startswith(prefix + "/"):
            return section
    found = ""
    for href, _ in NAV:
        inside = path == href or path.startswith(href.rstrip("/") + "/")
        if inside and len(href) > len(found) and (href != "/" or path == "/"):
            found = href
    return found


def nav_groups(owner: bool) -> list[tuple[str, list[tuple[str, str]]]]:
    """NAV_GROUPS with each section's label, the owner's sections for the owner only."""
    labels = dict(NAV)
    return [
        (group, [(href, labels[href]) for href in hrefs if owner or href not in OWNER_ONLY])
        for group, hrefs in NAV_GROUPS
    ]


# Set on the request by signed_in: the page tells its modules (data-session)
# that a 401 from the API means the session ended, not a wrong password.
SESSION_REQUIRED = web.RequestKey("pages.session_required", bool)


def render(request: web.Request, template: str, **context: Any) -> web.Response:
    auth = current(request)
    context.setdefault("title", "")
    owner = auth is not None and auth.account.is_owner
    context.update(
        account=auth.account if auth is not None else None,
        nav_groups=nav_groups(owner),
        path=request.path,
        section=section_of(request.path),
        screen=template.removesuffix(".html"),
        session_required=request.get(SESSION_REQUIRED, False),
    )
    html = aiohttp_jinja2.get_env(request.app).get_template(template).render(context)
    return web.Response(text=html, content_type="text/html", headers=PAGE_HEADERS)


def _sign_in_first(request: web.Request) -> web.HTTPSeeOther:
    # Back to this very page (path and query) once signed in.
    return web.HTTPSeeOther(
        "/signin?" + urlencode({"next": request.raw_path}), headers=PAGE_HEADERS
    )


Page = Callable[[web.Request], Awaitable[web.StreamResponse]]


def signed_in(handler: Page) -> Page:
    """A page for a signed-in person: anyone else goes to sign-in and comes back."""

    async def guarded(request: web.Request) -> web.StreamResponse:
        if current(request) is None:
            raise _sign_in_first(request)
        request[SESSION_REQUIRED] = True
        return await handler(request)

    guarded.__name__ = handler.__name__
    guarded.__doc__ = handler.__doc__
    return guarded


@routes.get("/")
@page
@signed_in
async def home(request: web.Request) -> web.Response:
    """The panel's overview."""
    return render(request, "home.html", title="Overview")


@routes.get("/signup")
@page
async def signup(request: web.Request) -> web.Response:
    return render(
        request, "signup.html", title="Create an account", next=safe_next(request.query.get("next"))
    )


@routes.get("/signin")
@page
async def signin(request: web.Request) -> web.Response:
    return render(
        request, "signin.html", title="Sign in", next=safe_next(request.query.get("next"))
    )


@routes.get("/signout")
@page
async def signout(request: web.Request) -> web.Response:
    return render(request, "signout.html", title="Sign out")


@routes.get("/forgot-password")
@page
async def forgot(request: web.Request) -> web.Response:
    return render(request, "forgot.html", title="Forgot your password")


@routes.get("/reset-password")
@page
async def reset(request: web.Request) -> web.Response:
    # The emailed link (mail/accounts/tokens.py); the module reads the token from the URL.
    return render(request, "reset.html", title="Choose a new password")


@routes.get("/verify-email")
@page
async def verify(request: web.Request) -> web.Response:
    # The emailed link. A button, not an automatic POST: link scanners that
    # open the mail must not spend the token.
    return render(request, "verify.html", title="Confirm your email address")


@routes.get("/authorize")
@page
@signed_in
async def authorize(request: web.Request) -> web.Response:
    """The OAuth consent page (the metadata's authorization_endpoint)."""
    return render(request, "authorize.html", title="Allow access")


@routes.get("/pair")
@page
@signed_in
async def pair(request: web.Request) -> web.Response:
    """Device pairing (the device flow's verification_uri)."""
    code = request.query.get("user_code", "")[:20]
    return render(request, "pair.html", title="Connect a device", user_code=code)


# --- sending: the screens of the sending API (mail/sending, mail/apikeys, mail/suppressions)


@routes.get("/api-keys")
@page
@signed_in
async def api_keys(request: web.Request) -> web.Response:
    """Create (the token shown once), list and revoke API keys."""
    return render(request, "api_keys.html", title="API keys")


@routes.get("/oauth-clients")
@page
@signed_in
async def oauth_clients(request: web.Request) -> web.Response:
    """The OAuth server's clients: register, edit, rotate the secret, revoke."""
    auth = current(request)
    if auth is None or not auth.account.is_owner:
        # As the admin API answers: the page exists, this person may not use it.
        response = render(request, "not_owner.html", title="OAuth apps")
        response.set_status(403)
        return response
    return render(request, "oauth_clients.html", title="OAuth apps")


@routes.get("/suppressions")
@page
@signed_in
async def suppressions(request: web.Request) -> web.Response:
    return render(request, "suppressions.html", title="Suppressions")


@routes.get("/emails")
@page
@signed_in
async def emails(request: web.Request) -> web.Response:
    """Sent email, newest first, with its status."""
    return render(request, "emails.html", title="Sent email")


@routes.get("/emails/{email_id:[0-9a-fA-F-]{36}}")
@page
@signed_in
async def email(request: web.Request) -> web.Response:
    """One sent email: recipients, attempts, last replies, events; reschedule or cancel."""
    return render(
        request, "email.html", title="Sent email", email_id=request.match_info["email_id"]
    )


@routes.get("/transfers")
@page
@signed_in
async def transfers(request: web.Request) -> web.Response:
    """Mail transfers: the start form and the list (docs/mail.md#transfers)."""
    return render(request, "transfers.html", title="Transfers")


@routes.get("/transfers/{transfer_id}")
@page
@signed_in
async def transfer(request: web.Request) -> web.Response:
    """One transfer with live progress; the module reads it from the API (404 said there)."""
    transfer_id = request.match_info["transfer_id"][:64]
    return render(request, "transfer.html", title="Transfer", transfer_id=transfer_id)


@routes.get(assets.PREFIX + "/{version:[0-9a-f]{12}}/{name:.+}")
@page
async def versioned_asset(request: web.Request) -> web.Response:
    if request.match_info["version"] != assets.VERSION:
        raise web.HTTPNotFound(text="no such asset")
    return assets.respond(request, request.match_info["name"], immutable=True)


@routes.get(assets.PREFIX + "/{name:.+}")
@page
async def asset(request: web.Request) -> web.Response:
    return assets.respond(request, request.match_info["name"], immutable=False)


# --- Domains and addresses (mail/pages/hosting.py reads what they show) -----


async def _hosting_page(
    request: web.Request,
    template: str,
    load: Awaitable[dict[str, Any]],
    title: Callable[[dict[str, Any]], str],
) -> web.Response:
    # Another account's domain or address, a missing one, a malformed id: the
    # API's 404, as a page.
    try:
        context = await load
    except MailError as exc:
        if exc.status != 404:
            raise
        response = render(request, "domains_missing.html", title="Not found")
        response.set_status(404)
        return response
    return render(request, template, title=title(context), **hosting.HELPERS, **context)


@routes.get("/domains")
@page
@signed_in
async def domains_list(request: web.Request) -> web.Response:
    """Domains: the list (search, sort, pages) and the form to add one."""
    load = hosting.domain_list(request)
    return await _hosting_page(request, "domains.html", load, lambda _: "Domains")


@routes.get("/domains/{domain_id}")
@page
@signed_in
async def domain_detail(request: web.Request) -> web.Response:
    """A domain: its DNS records and their status, publishing, DKIM keys, fallback."""
    load = hosting.domain_page(request)
    return await _hosting_page(
        request, "domains_detail.html", load, lambda c: c["domain"]["unicode_name"]
    )


@routes.get("/domains/{domain_id}/addresses")
@page
@signed_in
async def addresses_list(request: web.Request) -> web.Response:
    """A domain's addresses (search, sort, pages) and the form to create one."""
    load = hosting.address_list(request)
    return await _hosting_page(
        request, "addresses.html", load, lambda c: "Addresses of " + c["domain"]["unicode_name"]
    )


@routes.get("/addresses/{address_id}")
@page
@signed_in
async def address_detail(request: web.Request) -> web.Response:
    """An address: password, recovery address, quota, folders, activity."""
    load = hosting.address_page(request)
    return await _hosting_page(
        request, "addresses_detail.html", load, lambda c: c["address"]["unicode_email"]
    )


# --- billing: plans, usage, subscription, payment (mail/billing/)


@routes.get("/billing")
@page
@signed_in
async def billing(request: web.Request) -> web.Response:
    """The plan and its usage, plans, cancel, payment methods, transactions, tax id."""
    return render(request, "billing.html", title="Billing")


@routes.get("/billing/return")
@page
@signed_in
async def billing_return(request: web.Request) -> web.Response:
    """Where the provider's hosted checkout comes back to."""
    return render(request, "billing_return.html", title="Billing")
