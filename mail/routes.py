"""Every route table of the mail service, in one place.

Each domain package keeps its routes in ``<domain>/routes.py`` as a
``web.RouteTableDef`` named ``routes``; add it here to mount it.
"""

from __future__ import annotations

from aiohttp import web

from mail.accounts.routes import routes as accounts
from mail.addresses.routes import routes as addresses
from mail.apikeys.routes import routes as apikeys
from mail.auth.routes import routes as auth
from mail.billing.routes import routes as billing
from mail.discovery.routes import routes as discovery
from mail.domains.routes import routes as domains
from mail.filters.routes import routes as filters
from mail.mailboxes.routes import routes as mailboxes
from mail.overview.routes import routes as overview
from mail.recovery.routes import routes as recovery
from mail.sending.routes import routes as sending
from mail.suppressions.routes import routes as suppressions
from mail.transfers.routes import routes as transfers
from mail.webhooks.routes import routes as webhooks
from mail.webmail.routes import routes as webmail
from mail.wellknown.routes import routes as wellknown

ROUTE_TABLES: tuple[web.RouteTableDef, ...] = (
    auth,
    accounts,
    wellknown,
    filters,
    mailboxes,
    domains,
    addresses,
    discovery,
    # The sending API, its keys and the suppression list (docs/mail.md, "Sending API").
    sending,
    apikeys,
    suppressions,
    transfers,
    webhooks,
    recovery,
    overview,
    # Webmail: the mailbox owner's API under /api/mail/ (docs/mail.md, "Webmail").
    webmail,
    # Plans, entitlement, subscriptions, the payment provider (docs/mail.md, "Billing").
    billing,
)
