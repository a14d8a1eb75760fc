"""The signed-in panel's own screens: account, sessions, two-factor, filters, referrals.

Like every page they are GET-only shells: the screen modules
(``static/js/<template>.js``) read and change everything through /api. The one
thing served here that is not HTML is the two-factor QR code: an SVG of the
enrolment under way, drawn on the server (segno) so the secret never travels
in a URL and no QR library is shipped to the browser.
"""

from __future__ import annotations

import io

import segno
from aiohttp import web

from common.openapi import page
from mail.accounts import service as accounts_service
from mail.addresses import serializers as address_serializers
from mail.addresses import service as addresses_service
from mail.auth import service as auth_service
from mail.auth.sessions import current
from mail.context import mail_context
from mail.pages.routes import render, routes, signed_in
from mail.pages.security import PAGE_HEADERS

# Labels of the notification preferences (mail/accounts/service.py NOTIFICATION_DEFAULTS).
NOTIFICATIONS = {
    "dns_alerts": ("DNS alerts", "A domain's DNS records stop checking out."),
    "quota_alerts": ("Quota alerts", "A mailbox is nearly full."),
    "billing": ("Billing", "Receipts and payment problems."),
    "product_news": ("Product news", "Now and then, what is new."),
}
UUID = "{filter_id:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}}"


@routes.get("/account")
@page
@signed_in
async def account(request: web.Request) -> web.Response:
    """Profile, email, password, two-factor, notifications, deletion."""
    auth = current(request)
    assert auth is not None
    prefs = accounts_service.notifications_of(auth.account)
    choices = [(key, *NOTIFICATIONS.get(key, (key, "")), on) for key, on in prefs.items()]
    return render(request, "account.html", title="Account", notifications=choices)


@routes.get("/account/sessions")
@page
@signed_in
async def sessions(request: web.Request) -> web.Response:
    return render(request, "sessions.html", title="Sessions")


@routes.get("/account/two-factor")
@page
@signed_in
async def two_factor(request: web.Request) -> web.Response:
    """Enrolment: the module starts it (POST /api/auth/totp/setup) and shows the QR code."""
    return render(request, "two_factor.html", title="Two-factor sign-in")


@routes.get("/account/two-factor/qr.svg")
@page
async def two_factor_qr(request: web.Request) -> web.Response:
    """The QR code of this account's pending enrolment; 404 when none is under way."""
    auth = current(request)
    uri = None
    if auth is not None and auth.session is not None:  # the panel's own cookie, nothing else
        uri = auth_service.pending_totp_uri(mail_context(request), auth.account)
    if uri is None:
        raise web.HTTPNotFound(text="no two-factor enrolment under way", headers=PAGE_HEADERS)
    out = io.BytesIO()
    # Black on white with the standard quiet zone whatever the page's colour scheme:
    # authenticator cameras read that best.
    segno.make(uri, error="m").save(
        out, kind="svg", scale=5, border=4, dark="#000", light="#fff", xmldecl=False,
        title="QR code for your authenticator app",
    )  # fmt: skip
    headers = {**PAGE_HEADERS, "Cross-Origin-Resource-Policy": "same-origin"}
    return web.Response(body=out.getvalue(), content_type="image/svg+xml", headers=headers)


async def address_choices(request: web.Request) -> dict[str, object]:
    """The account's addresses for a filter screen's picker, read here in one query.

    Rendered into the page rather than fetched by its module: one call per
    domain (the API's addresses are per domain) spent the rate limit of an
    account with a dozen domains (docs/mail.md, "Rate limits").
    """
    auth = current(request)
    assert auth is not None
    rows = await addresses_service.all_of_account(mail_context(request), str(auth.account.id))
    chosen = request.query.get("address_id", "")
    return {
        "addresses": [address_serializers.address(r) for r in rows],
        "chosen_address": chosen if any(r.id == chosen for r in rows) else "",
    }


@routes.get("/filters")
@page
@signed_in
async def filters(request: web.Request) -> web.Response:
    return render(request, "filters.html", title="Filters", **await address_choices(request))


@routes.get("/filters/new")
@page
@signed_in
async def filter_new(request: web.Request) -> web.Response:
    choices = await address_choices(request)
    return render(request, "filter.html", title="New filter", filter_id="", **choices)


@routes.get("/filters/" + UUID)
@page
@signed_in
async def filter_edit(request: web.Request) -> web.Response:
    return render(
        request,
        "filter.html",
        title="Edit filter",
        filter_id=request.match_info["filter_id"],
        **await address_choices(request),
    )


@routes.get("/referrals")
@page
@signed_in
async def referrals(request: web.Request) -> web.Response:
    """Read on the server (it changes nothing), so it shows without scripts too."""
    auth = current(request)
    assert auth is not None
    ctx = mail_context(request)
    signups, verified = await accounts_service.referral_counts(ctx, auth.account)
    return render(
        request,
        "referrals.html",
        title="Referrals",
        url=accounts_service.referral_url(ctx, auth.account),
        signups=signups,
        verified=verified,
    )
