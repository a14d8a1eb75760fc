"""The route tables of domains, addresses and mail-client discovery, mounted by mail/service.py."""

from __future__ import annotations

from aiohttp import web

from mail.addresses.routes import routes as addresses
from mail.discovery.routes import routes as discovery
from mail.domains.routes import routes as domains

HOSTING_ROUTE_TABLES: tuple[web.RouteTableDef, ...] = (domains, addresses, discovery)
