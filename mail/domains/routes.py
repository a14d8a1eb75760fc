"""HTTP routes of the Domains table: domains, DNS, provider, DKIM keys, fallback."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from common.openapi import integer, obj, operation, string
from common.web import json_response
from mail.auth import sessions
from mail.context import mail_context
from mail.dkim import keys
from mail.dkim import store as keys_store
from mail.dns import zone
from mail.dns.providers import detect
from mail.dns.providers.base import ProviderError
from mail.dns.records import DMARC_POLICIES
from mail.domains import serializers, service, store
from mail.domains.context import hosting_context
from mail.errors import MailError, missing_required_field, not_found, validation_error
from mail.openapi import list_query
from mail.web.body import optional_str, read_body, required_str
from mail.web.lists import list_envelope, parse_list_params
from mail.web.ownership import parse_id, parse_uuid

routes = web.RouteTableDef()

MAX_DESCRIPTION = 200
MAX_QUOTA_BYTES = 1 << 50  # 1 PiB: anything larger is a typo


async def _owned_domain(request: web.Request, conn: Any) -> dict[str, Any]:
    account = sessions.require(request).account
    row = await store.get_owned(conn, account.id, parse_id(request, "domain_id"))
    if row is None:
        raise not_found("domain")
    return row


@routes.get("/api/domains")
@operation(query=list_query(store.DOMAIN_SORTS), auth="session")
async def list_domains(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    params = parse_list_params(request.query, store.DOMAIN_SORTS)
    async with ctx.db.connection() as conn:
        rows, total = await store.list_for_account(conn, account.id, params)
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
    hctx = hosting_context(request)
    account = sessions.require(request).account
    body = await read_body(request, allowed={"name", "description"})
    name = service.parse_name(required_str(body, "name", max_length=1000))
    description = optional_str(body, "description", max_length=MAX_DESCRIPTION, default="") or ""
    domain_id = await service.add(
        ctx.db,
        hctx,
        account_id=account.id,
        name=name,
        description=description.strip(),
        now=ctx.clock.now(),
    )
    async with ctx.db.connection() as conn:
        row = await store.get(conn, domain_id)
    assert row is not None
    return json_response(serializers.domain(row), status=201)


@routes.get("/api/domains/{domain_id}")
@operation(auth="session")
async def read_domain(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    async with ctx.db.connection() as conn:
        row = await _owned_domain(request, conn)
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


def parse_quota(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise validation_error(f"{field} must be an integer number of bytes (0 = unlimited)")
    if not 0 <= value <= MAX_QUOTA_BYTES:
        raise validation_error(f"{field} must be between 0 and {MAX_QUOTA_BYTES}")
    return value


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
    async with ctx.db.transaction() as conn:
        row = await _owned_domain(request, conn)
        await store.update(conn, row["id"], changes, ctx.clock.now())
        updated = await store.get(conn, row["id"])
    assert updated is not None
    return json_response(serializers.domain(updated))


@routes.delete("/api/domains/{domain_id}")
@operation(status=204, auth="session", errors=(409,))
async def delete_domain(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    # One transaction: the domain, its keys, its addresses and their mailboxes
    # (mta tables reference mail.addresses ON DELETE CASCADE) go together.
    async with ctx.db.transaction() as conn:
        row = await _owned_domain(request, conn)
        await store.delete(conn, row["id"])
    return web.Response(status=204)


@routes.get("/api/domains/{domain_id}/dns")
@operation(auth="session")
async def dns_records(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    hctx = hosting_context(request)
    async with ctx.db.connection() as conn:
        row = await _owned_domain(request, conn)
        items = await service.record_statuses(conn, hctx, row)
    return json_response(serializers.record_set(row, items))


@routes.get("/api/domains/{domain_id}/dns/zone")
@operation(auth="session", response={"type": "string"}, response_media="text/dns")
async def dns_zone(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    hctx = hosting_context(request)
    async with ctx.db.connection() as conn:
        row = await _owned_domain(request, conn)
        key_rows = await keys_store.list_for_domain(conn, row["id"])
    records = service.expected_records(hctx, row, key_rows)
    text = zone.zone_text(
        row["name"], records, generated_by=f"generated {ctx.clock.now():%Y-%m-%dT%H:%M:%SZ}"
    )
    return web.Response(
        text=text,
        content_type="text/dns",
        headers={"Content-Disposition": f'attachment; filename="{row["name"]}.zone"'},
    )


@routes.get("/api/domains/{domain_id}/dns/provider")
@operation(auth="session")
async def dns_provider(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    hctx = hosting_context(request)
    async with ctx.db.connection() as conn:
        row = await _owned_domain(request, conn)
    nameservers = await service.nameservers(hctx, row["name"])
    found = detect.detect(nameservers or [])
    return json_response(
        serializers.provider(found, nameservers, found.id in hctx.publish_providers)
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
    hctx = hosting_context(request)
    body = await read_body(request, allowed={"api_token", "provider"})
    # The token lives in this handler's locals and the provider call only.
    api_token = required_str(body, "api_token", max_length=1000).strip()
    provider_id = optional_str(body, "provider", max_length=50)
    async with ctx.db.connection() as conn:
        row = await _owned_domain(request, conn)
        key_rows = await keys_store.list_for_domain(conn, row["id"])
    if provider_id is None:
        provider_id = detect.detect(await service.nameservers(hctx, row["name"]) or []).id
    elif detect.by_id(provider_id) is None:
        raise validation_error(
            f"provider must be one of {', '.join(p.id for p in detect.PROVIDERS)}"
        )
    publisher = hctx.publisher(provider_id)
    if publisher is None:
        raise validation_error(
            f"publishing through {provider_id} is not supported; supported:"
            f" {', '.join(hctx.publish_providers)} (or import GET dns/zone by hand)"
        )
    records = service.expected_records(hctx, row, key_rows)
    try:
        result = await publisher.publish(row["name"], records, api_token)
    except ProviderError as exc:
        raise exc.to_mail_error() from None
    return json_response(serializers.publish_result(result))


@routes.post("/api/domains/{domain_id}/check")
@operation(auth="session")
async def dns_check(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    hctx = hosting_context(request)
    async with ctx.db.connection() as conn:
        row = await _owned_domain(request, conn)
    await service.check(ctx.db, hctx, row["id"], ctx.clock.now())
    async with ctx.db.connection() as conn:
        checked = await store.get(conn, row["id"])
        assert checked is not None
        items = await service.record_statuses(conn, hctx, checked)
    return json_response(serializers.record_set(checked, items))


@routes.get("/api/domains/{domain_id}/keys")
@operation(auth="session")
async def list_keys(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    async with ctx.db.connection() as conn:
        row = await _owned_domain(request, conn)
        key_rows = await keys_store.list_for_domain(conn, row["id"])
    data = [serializers.dkim_key(k, row["name"]) for k in key_rows]
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
    ctx = mail_context(request)
    hctx = hosting_context(request)
    body = await read_body(request, allowed={"algorithm"})
    algorithm = optional_str(body, "algorithm", max_length=50, default=keys.RSA)
    if algorithm not in keys.ALGORITHMS:
        raise validation_error(f"algorithm must be one of {', '.join(keys.ALGORITHMS)}")
    async with ctx.db.connection() as conn:
        await _owned_domain(request, conn)
    pair = await keys.generate(algorithm)
    async with ctx.db.transaction() as conn:
        row = await _owned_domain(request, conn)
        key_id = await service.insert_key(
            conn, hctx, row["id"], pair, active=False, now=ctx.clock.now()
        )
        key = await keys_store.get(conn, row["id"], key_id)
    assert key is not None
    return json_response(serializers.dkim_key(key, row["name"]), status=201)


@routes.delete("/api/domains/{domain_id}/keys/{key_id}")
@operation(status=204, auth="session", errors=(409,))
async def delete_key(request: web.Request) -> web.Response:
    """Not in the spec's table: retire a standby key (never the active one)."""
    ctx = mail_context(request)
    async with ctx.db.connection() as conn:
        row = await _owned_domain(request, conn)
    await service.delete_key(ctx.db, domain_id=row["id"], key_id=parse_id(request, "key_id"))
    return web.Response(status=204)


@routes.post("/api/domains/{domain_id}/keys/{key_id}/activate")
@operation(body=obj(), auth="session", errors=(409,))
async def activate_key(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    await read_body(request, allowed=())
    async with ctx.db.connection() as conn:
        row = await _owned_domain(request, conn)
    key = await service.activate_key(
        ctx.db, domain_id=row["id"], key_id=parse_id(request, "key_id")
    )
    return json_response(serializers.dkim_key(key, row["name"]))


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
    await service.set_fallback(
        ctx.db,
        account_id=account.id,
        domain_id=domain_id,
        fallback_id=fallback_id,
        now=ctx.clock.now(),
    )
    async with ctx.db.connection() as conn:
        row = await store.get(conn, domain_id)
    assert row is not None
    return json_response(serializers.domain(row))
