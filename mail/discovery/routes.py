"""What mail clients discover: client-config, autoconfig, autodiscover, MTA-STS, Apple profiles.

All but client-config and the Apple profiles are public: mail clients and
sending MTAs call them without credentials. They answer only for domains
hosted here. An Apple profile is one address's: the panel owner's (the
svc_session cookie; another account's address is 404) or the mailbox's own
in webmail (the svc_webmail cookie).
"""

from __future__ import annotations

from aiohttp import web

from common.openapi import array, integer, obj, operation, string
from common.web import json_response, read_body
from mail.auth import sessions
from mail.context import mail_context
from mail.discovery import apple_profile, autoconfig, autodiscover, client_config, service
from mail.dns.records import policy_for
from mail.domains import service as domains_service
from mail.domains.names import InvalidDomainName, normalize_domain, unicode_domain
from mail.domains.store import Domain
from mail.errors import not_found
from mail.web.ownership import parse_id
from mail.webmail import sessions as webmail_sessions

routes = web.RouteTableDef()

XML = "text/xml"


async def _hosted_domain(request: web.Request, raw: str) -> Domain | None:
    try:
        name = normalize_domain(raw)
    except InvalidDomainName:
        return None
    return await domains_service.hosted(mail_context(request), name)


def _host_domain(request: web.Request, prefix: str) -> str | None:
    """``mta-sts.example.com:443`` with prefix ``mta-sts.`` -> ``example.com``."""
    host = (request.host or "").lower()
    if host.startswith("["):
        return None  # an IPv6 literal names no domain
    host = host.rsplit(":", 1)[0].rstrip(".")
    if not host.startswith(prefix):
        return None
    return host[len(prefix) :]


_SERVER = obj(
    {
        "hostname": string(),
        "port": integer(minimum=1, maximum=65535),
        "security": string(enum=("tls", "starttls")),
        "authentication": string(enum=("password",)),
        "username": string(),
    },
    required=["hostname", "port", "security", "authentication", "username"],
)
CLIENT_CONFIG = obj(
    {
        "object": string(enum=("client_config",)),
        # Each list in the order a client should prefer: implicit TLS first.
        "imap": array(_SERVER),
        "pop3": array(_SERVER),
        "smtp": _SERVER,
        "managesieve": array(_SERVER),
        "jmap": obj(
            {
                "hostname": string(),
                "port": integer(minimum=1, maximum=65535),
                "security": string(enum=("tls", "none")),
                "session_url": string(fmt="uri"),
                "authentication": string(enum=("password",)),
                "username": string(),
            },
            required=["hostname", "port", "security", "session_url"],
        ),
        "autoconfig_url": string(fmt="uri"),
        "autodiscover_url": string(fmt="uri"),
    },
    required=["object", "imap", "pop3", "smtp", "managesieve", "jmap"],
)


@routes.get("/api/client-config")
@operation(auth="session", response=CLIENT_CONFIG)
async def client_config_route(request: web.Request) -> web.Response:
    sessions.require(request)
    ep = client_config.endpoints(mail_context(request).hosting)
    return json_response(client_config.serialize(ep))


@routes.get("/mail/config-v1.1.xml")
@routes.get("/.well-known/autoconfig/mail/config-v1.1.xml")
@operation(query={"emailaddress": string()}, response={"type": "string"}, response_media=XML)
async def autoconfig_route(request: web.Request) -> web.Response:
    # Thunderbird sends ?emailaddress=; older clients only the autoconfig.<domain> host.
    address = request.query.get("emailaddress", "")
    raw_domain = (
        address.rpartition("@")[2] if "@" in address else _host_domain(request, "autoconfig.")
    )
    domain = await _hosted_domain(request, raw_domain or "")
    if domain is None:
        raise not_found("mail domain")
    ep = client_config.endpoints(mail_context(request).hosting)
    body = autoconfig.render(domain.name, unicode_domain(domain.name), ep)
    return web.Response(body=body, content_type=XML, charset="utf-8")


def _pox(body: bytes, status: int = 200) -> web.Response:
    return web.Response(body=body, status=status, content_type=XML, charset="utf-8")


@routes.post("/autodiscover/autodiscover.xml")
@routes.post("/Autodiscover/Autodiscover.xml")
@operation(
    body={"type": "string"},
    body_media="text/xml",
    response={"type": "string"},
    response_media="text/xml",
    # The Autodiscover protocol answers its own XML errors.
    other={
        400: ("text/xml", {"type": "string"}),
        404: ("text/xml", {"type": "string"}),
    },
)
async def autodiscover_route(request: web.Request) -> web.Response:
    now = mail_context(request).clock.now()
    try:
        raw = await read_body(request, max_bytes=autodiscover.MAX_BODY_BYTES)
    except web.HTTPRequestEntityTooLarge:
        error = autodiscover.render_error(autodiscover.INVALID_REQUEST, "Invalid Request", now)
        return _pox(error, status=413)
    try:
        parsed = autodiscover.parse_request(raw)
    except autodiscover.AutodiscoverError as exc:
        return _pox(autodiscover.render_error(exc.code, exc.message, now), status=400)
    local_part, _, raw_domain = parsed.email.rpartition("@")
    domain = await _hosted_domain(request, raw_domain)
    if domain is None:
        error = autodiscover.render_error(
            autodiscover.ADDRESS_NOT_FOUND, "The e-mail address cannot be found.", now
        )
        return _pox(error, status=404)
    email = f"{local_part.lower()}@{domain.name}"
    ep = client_config.endpoints(mail_context(request).hosting)
    return _pox(autodiscover.render_settings(email, email, ep))


@routes.get("/.well-known/mta-sts.txt")
@operation(response={"type": "string"}, response_media="text/plain")
async def mta_sts_route(request: web.Request) -> web.Response:
    raw_domain = _host_domain(request, "mta-sts.")
    domain = await _hosted_domain(request, raw_domain) if raw_domain else None
    if domain is None:
        raise not_found("MTA-STS policy")
    policy = policy_for(mail_context(request).hosting)
    return web.Response(text=policy, content_type="text/plain", charset="utf-8")


PROFILE = {"type": "string", "format": "binary"}


def _profile_response(profile: apple_profile.AppleProfile) -> web.Response:
    return web.Response(
        body=profile.body,
        headers={
            "Content-Type": apple_profile.MEDIA_TYPE,
            "Content-Disposition": f'attachment; filename="{profile.filename}"',
            "Cache-Control": "private, no-store",
            "X-Content-Type-Options": "nosniff",
        },
    )


@routes.get("/api/addresses/{address_id}/apple-profile")
@operation(
    summary="The address's configuration profile for Apple Mail (.mobileconfig)",
    auth="session",
    response=PROFILE,
    response_media=apple_profile.MEDIA_TYPE,
    errors=(409,),
)
async def address_apple_profile(request: web.Request) -> web.Response:
    account = sessions.require(request).account
    profile = await service.address_profile(
        mail_context(request), account.id, parse_id(request, "address_id")
    )
    return _profile_response(profile)


@routes.get("/api/mail/apple-profile")
@operation(
    summary="The signed-in mailbox's configuration profile for Apple Mail (.mobileconfig)",
    auth="webmail",
    response=PROFILE,
    response_media=apple_profile.MEDIA_TYPE,
    errors=(409,),
)
async def mailbox_apple_profile(request: web.Request) -> web.Response:
    session = webmail_sessions.require(request)
    return _profile_response(await service.mailbox_profile(mail_context(request), session))
