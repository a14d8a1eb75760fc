"""HTTP routes of the Domains table: domains, DNS, provider, DKIM keys, fallback."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.openapi import integer, obj, operation, string
from common.web import json_response
from mail.auth import sessions
from mail.context import mail_context
from mail.dkim import keys
from mail.dns import zone
from mail.dns.records import DMARC_POLICIES
from mail.domains import serializers, service, store
from mail.domains.service import MAX_QUOTA_BYTES, parse_quota
from mail.errors import MailError, missing_required_field, validation_error
from mail.openapi import LIST, list_query
from mail.web.body import optional_str, read_body, required_str
from mail.web.lists import list_envelope, parse_list_params
from mail.web.ownership import parse_id, parse_uuid

routes = web.RouteTableDef()

MAX_DESCRIPTION = 200


def _domain_id(request: web.Request) -> tuple[str, str]:
    """The signed-in account's id (else 401) and the path's domain id (else 404)."""
    account = sessions.require(request).account
    return account.id, parse_id(request, "domain_id")


@routes.get("/api/domains")
@operation(response=LIST, query=list_query(store.DOMAIN_SORTS), auth="session")
async def list_domains(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    params = parse_list_params(request.query, store.DOMAIN_SORTS)
    rows, total = await service.list_domains(ctx, account.id, params)
    return json_response(list_envelope([serializers.domain(r) for r in rows], params, total))


@routes.post("/api/domains")
@operation(
    status=201,
    body=obj(
        {
            "name": string(min_length=1, max_length=1000),
            "description": string(max_length=MAX_DESCRIPTION, nullable=True),
        },
        required=["name"],
    ),
    auth="session",
    errors=(402, 409),
)
async def add_domain(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    body = await read_body(request, allowed={"name", "description"})
    name = service.parse_name(required_str(body, "name", max_length=1000))
    description = optional_str(body, "description", max_length=MAX_DESCRIPTION, default="") or ""
    row = await service.add(ctx, account_id=account.id, name=name, description=description.strip())
    return json_response(serializers.domain(row), status=201)


@routes.get("/api/domains/{domain_id}")
@operation(auth="session")
async def read_domain(request: web.Request) -> web.Response:
    row = await service.get(mail_context(request), *_domain_id(request))
    return json_response(serializers.domain(row))


def _parse_changes(body: dict[str, Any]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    if "description" in body:
        description = optional_str(body, "description", max_length=MAX_DESCRIPTION)
        changes["description"] = (description or "").strip()
    if "dmarc_policy" in body:
        policy = body["dmarc_policy"]
        if policy not in DMARC_POLICIES:
            raise validation_error(f"dmarc_policy must be one of {', '.join(DMARC_POLICIES)}")
        changes["dmarc_policy"] = policy
    if "default_quota_bytes" in body:
        changes["default_quota_bytes"] = parse_quota(
            body["default_quota_bytes"], "default_quota_bytes"
        )
    return changes


@routes.patch("/api/domains/{domain_id}")
@operation(
    body=obj(
        {
            "description": string(max_length=MAX_DESCRIPTION, nullable=True),
            "dmarc_policy": string(enum=DMARC_POLICIES),
            "default_quota_bytes": integer(minimum=0, maximum=MAX_QUOTA_BYTES),
        }
    ),
    auth="session",
)
async def update_domain(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed=set(store.EDITABLE))
    changes = _parse_changes(body)
    updated = await service.update(ctx, *_domain_id(request), changes)
    return json_response(serializers.domain(updated))


@routes.delete("/api/domains/{domain_id}")
@operation(status=204, auth="session", errors=(409,))
async def delete_domain(request: web.Request) -> web.Response:
    await service.delete(mail_context(request), *_domain_id(request))
    return web.Response(status=204)


@routes.get("/api/domains/{domain_id}/dns")
@operation(auth="session")
async def dns_records(request: web.Request) -> web.Response:
    row, items = await service.dns_records(mail_context(request), *_domain_id(request))
    return json_response(serializers.record_set(row, items))


@routes.get("/api/domains/{domain_id}/dns/zone")
@operation(auth="session", response={"type": "string"}, response_media="text/dns")
async def dns_zone(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    row, records = await service.zone_records(ctx, *_domain_id(request))
    text = zone.zone_text(
        row.name, records, generated_by=f"generated {ctx.clock.now():%Y-%m-%dT%H:%M:%SZ}"
    )
    return web.Response(
        text=text,
        content_type="text/dns",
        headers={"Content-Disposition": f'attachment; filename="{row.name}.zone"'},
    )


@routes.get("/api/domains/{domain_id}/dns/provider")
@operation(auth="session")
async def dns_provider(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    found, nameservers = await service.provider(ctx, *_domain_id(request))
    return json_response(
        serializers.provider(found, nameservers, found.id in ctx.publish_providers)
    )


@routes.post("/api/domains/{domain_id}/dns/publish")
@operation(
    body=obj(
        {
            "api_token": string(min_length=1, max_length=1000),
            "provider": string(max_length=50, nullable=True),
        },
        required=["api_token"],
    ),
    auth="session",
    errors=(502,),
)
async def dns_publish(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed={"api_token", "provider"})
    # The token lives in this handler's locals and the provider call only.
    api_token = required_str(body, "api_token", max_length=1000).strip()
    provider_id = optional_str(body, "provider", max_length=50)
    result = await service.publish(ctx, *_domain_id(request), api_token, provider_id)
    return json_response(serializers.publish_result(result))


@routes.post("/api/domains/{domain_id}/check")
@operation(auth="session")
async def dns_check(request: web.Request) -> web.Response:
    checked, items = await service.check_now(mail_context(request), *_domain_id(request))
    return json_response(serializers.record_set(checked, items))


@routes.get("/api/domains/{domain_id}/keys")
@operation(auth="session")
async def list_keys(request: web.Request) -> web.Response:
    row, key_rows = await service.list_keys(mail_context(request), *_domain_id(request))
    data = [serializers.dkim_key(k, row.name) for k in key_rows]
    return json_response({"object": "list", "data": data})


@routes.post("/api/domains/{domain_id}/keys")
@operation(
    status=201,
    body=obj({"algorithm": string(enum=keys.ALGORITHMS, nullable=True)}),
    auth="session",
    errors=(409,),
)
async def create_key(request: web.Request) -> web.Response:
    """Not in the spec's table: a new standby key, for rotation (published, then activated)."""
    body = await read_body(request, allowed={"algorithm"})
    algorithm = optional_str(body, "algorithm", max_length=50, default=keys.RSA)
    if algorithm not in keys.ALGORITHMS:
        raise validation_error(f"algorithm must be one of {', '.join(keys.ALGORITHMS)}")
    row, key = await service.create_key(mail_context(request), *_domain_id(request), algorithm)
    return json_response(serializers.dkim_key(key, row.name), status=201)


@routes.delete("/api/domains/{domain_id}/keys/{key_id}")
@operation(status=204, auth="session", errors=(409,))
async def delete_key(request: web.Request) -> web.Response:
    """Not in the spec's table: retire a standby key (never the active one)."""
    key_id = request.match_info["key_id"]
    await service.delete_key(mail_context(request), *_domain_id(request), key_id)
    return web.Response(status=204)


@routes.post("/api/domains/{domain_id}/keys/{key_id}/activate")
@operation(body=obj(), auth="session", errors=(409,))
async def activate_key(request: web.Request) -> web.Response:
    await read_body(request, allowed=())
    key_id = request.match_info["key_id"]
    row, key = await service.activate_key(mail_context(request), *_domain_id(request), key_id)
    return json_response(serializers.dkim_key(key, row.name))


@routes.post("/api/domains/{domain_id}/fallback")
@operation(
    body=obj(
        {"fallback_domain_id": string(fmt="uuid", nullable=True)}, required=["fallback_domain_id"]
    ),
    auth="session",
)
async def set_fallback(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    body = await read_body(request, allowed={"fallback_domain_id"})
    if "fallback_domain_id" not in body:
        raise missing_required_field("fallback_domain_id")
    raw = body["fallback_domain_id"]
    if raw is not None and not isinstance(raw, str):
        raise validation_error("fallback_domain_id must be a domain id or null")
    domain_id = parse_id(request, "domain_id")
    fallback_id = None
    if raw is not None:
        try:
            fallback_id = parse_uuid(raw, "fallback domain")
        except MailError:
            raise validation_error("fallback_domain_id is not a domain id") from None
    row = await service.set_fallback(ctx, account.id, domain_id, fallback_id)
    return json_response(serializers.domain(row))
