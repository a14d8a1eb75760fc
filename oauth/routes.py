"""Every route of the OAuth server, in one table.

Paths are relative to base_path (OAuth routes), admin_base_path (client
administration) or the host root (the RFC 8414 well-known documents).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Literal

from aiohttp import web

from oauth import views
from oauth.server import AuthorizationServer

View = Callable[[AuthorizationServer, web.Request], Awaitable[web.StreamResponse]]
Guard = Literal["open", "user", "admin"]
Mount = Literal["base", "admin", "well_known"]


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    view: View
    guard: Guard
    mount: Mount = "base"


ROUTES: Final = (
    # Consent routes: the host's consent and pairing pages call these.
    Route("GET", "/authorize/info", views.authorize_info, "user"),
    Route("POST", "/authorize/approve", views.authorize_approve, "user"),
    Route("POST", "/authorize/deny", views.authorize_deny, "user"),
    Route("GET", "/device/info", views.device_info, "user"),
    Route("POST", "/device/approve", views.device_approve, "user"),
    Route("POST", "/device/deny", views.device_deny, "user"),
    # Client endpoints: the token endpoint authenticates the client itself.
    Route("POST", "/token", views.token, "open"),
    Route("POST", "/revoke", views.revoke, "open"),
    Route("POST", "/introspect", views.introspect, "open"),
    Route("POST", "/device/authorize", views.device_authorize, "open"),
    # Client administration.
    Route("GET", "/clients", views.list_clients, "admin", "admin"),
    Route("POST", "/clients", views.create_client, "admin", "admin"),
    Route("PATCH", "/clients/{id}", views.update_client, "admin", "admin"),
    Route("POST", "/clients/{id}/rotate-secret", views.rotate_secret, "admin", "admin"),
    Route("DELETE", "/clients/{id}", views.revoke_client, "admin", "admin"),
    # RFC 8414 metadata (the path-inserted form is added for an issuer with a path).
    Route("GET", "", views.metadata, "open", "well_known"),
)
