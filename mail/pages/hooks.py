"""Screens of webhooks (signed in) and the public mailbox recovery page.

GET-only shells like every page: the modules ``static/js/webhooks.js``,
``webhook.js``, ``webhook_event.js`` and ``recover.js`` drive /api/webhooks
and /api/recover. The event types and their groups are rendered here from
mail/webhooks/events.py, so the form offers exactly what the API accepts.
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import page
from mail.pages.routes import render, routes, signed_in
from mail.webhooks.events import ADDRESS_EVENTS, DOMAIN_EVENTS, EMAIL_EVENTS

UUID = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
EVENT_GROUPS = (
    ("Email", EMAIL_EVENTS),
    ("Domains", DOMAIN_EVENTS),
    ("Addresses", ADDRESS_EVENTS),
)


@routes.get("/webhooks")
@page
@signed_in
async def webhooks(request: web.Request) -> web.Response:
    return render(request, "webhooks.html", title="Webhooks")


@routes.get("/webhooks/new")
@page
@signed_in
async def webhook_new(request: web.Request) -> web.Response:
    return render(request, "webhook.html", title="New webhook", webhook_id="", groups=EVENT_GROUPS)


@routes.get("/webhooks/{webhook_id:" + UUID + "}")
@page
@signed_in
async def webhook_edit(request: web.Request) -> web.Response:
    return render(
        request,
        "webhook.html",
        title="Webhook",
        webhook_id=request.match_info["webhook_id"],
        groups=EVENT_GROUPS,
    )


@routes.get("/webhooks/{webhook_id:" + UUID + "}/events/{event_id:" + UUID + "}")
@page
@signed_in
async def webhook_event(request: web.Request) -> web.Response:
    return render(
        request,
        "webhook_event.html",
        title="Webhook event",
        webhook_id=request.match_info["webhook_id"],
        event_id=request.match_info["event_id"],
    )


@routes.get("/recover")
@page
async def recover(request: web.Request) -> web.Response:
    """For mailbox owners: ask for a link, or (with ?token=) choose the new password."""
    return render(request, "recover.html", title="Reset a mailbox password")
