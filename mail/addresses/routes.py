"""HTTP routes of addresses: per domain, and by address id.

The handlers parse and serialize; mail/addresses/service.py does the rest.
The folders and activity routes of the Addresses table live in
mail/mailboxes/, over the mailbox store's facade (mta/mailstore.py).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from email_validator import EmailNotValidError, validate_email

from common.openapi import integer, obj, operation, string
from common.web import json_response
from mail.accounts.service import MAX_PASSWORD, check_new_password
from mail.addresses import serializers, service, store
from mail.addresses.localpart import MAX_LOCAL_PART, InvalidLocalPart, normalize_local_part
from mail.auth import sessions
from mail.context import mail_context
from mail.domains.service import MAX_QUOTA_BYTES, parse_quota
from mail.errors import missing_required_field, validation_error
from mail.openapi import LIST, list_query
from mail.web.body import optional_str, read_body, required_str
from mail.web.lists import list_envelope, parse_list_params
from mail.web.ownership import parse_id

routes = web.RouteTableDef()

MAX_DISPLAY_NAME = 100
MAX_EMAIL = 254


def _address_id(request: web.Request) -> tuple[str, str]:
    """The signed-in account's id (else 401) and the path's address id (else 404)."""
    account = sessions.require(request).account
    return account.id, parse_id(request, "address_id")


def _display_name(body: dict[str, Any]) -> str:
    value = optional_str(body, "display_name", max_length=MAX_DISPLAY_NAME, default="") or ""
    if any(ch in value for ch in "\r\n"):
        raise validation_error("display_name cannot contain line breaks")
    return value.strip()


def _recovery_email(body: dict[str, Any]) -> str | None:
    value = body.get("recovery_email")
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise validation_error("recovery_email must be a string or null")
    if len(value) > MAX_EMAIL:
        raise validation_error(f"recovery_email must be at most {MAX_EMAIL} characters")
    try:
        return validate_email(value, check_deliverability=False).normalized.lower()
    except EmailNotValidError as exc:
        raise validation_error(f"recovery_email is not valid: {exc}") from None


def _password(body: dict[str, Any]) -> str:
    password = required_str(body, "password", max_length=MAX_PASSWORD)
    check_new_password(password)
    return password


@routes.get("/api/domains/{domain_id}/addresses")
@operation(response=LIST, query=list_query(store.ADDRESS_SORTS), auth="session")
async def list_addresses(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    params = parse_list_params(request.query, store.ADDRESS_SORTS)
    domain_id = parse_id(request, "domain_id")
    rows, total = await service.list_addresses(ctx, account.id, domain_id, params)
    return json_response(list_envelope([serializers.address(r) for r in rows], params, total))


@routes.post("/api/domains/{domain_id}/addresses")
@operation(
    status=201,
    body=obj(
        {
            "local_part": string(min_length=1, max_length=MAX_LOCAL_PART),
            "password": string(min_length=1, max_length=MAX_PASSWORD),
            "display_name": string(max_length=MAX_DISPLAY_NAME, nullable=True),
            "quota_bytes": integer(minimum=0, maximum=MAX_QUOTA_BYTES),
            "recovery_email": string(max_length=MAX_EMAIL, nullable=True),
        },
        required=["local_part", "password"],
    ),
    auth="session",
    errors=(402, 409),
)
async def create_address(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    body = await read_body(
        request,
        allowed={"local_part", "password", "display_name", "quota_bytes", "recovery_email"},
    )
    try:
        local_part = normalize_local_part(required_str(body, "local_part", max_length=200))
    except InvalidLocalPart as exc:
        raise validation_error(str(exc)) from None
    display_name = _display_name(body)
    recovery_email = _recovery_email(body)
    quota = body.get("quota_bytes")
    quota_bytes = None if quota is None else parse_quota(quota, "quota_bytes")
    password = _password(body)
    row = await service.create(
        ctx,
        account.id,
        parse_id(request, "domain_id"),
        local_part=local_part,
        password=password,
        display_name=display_name,
        quota_bytes=quota_bytes,
        recovery_email=recovery_email,
    )
    return json_response(serializers.address(row), status=201)


@routes.get("/api/addresses/{address_id}")
@operation(auth="session")
async def read_address(request: web.Request) -> web.Response:
    row = await service.get(mail_context(request), *_address_id(request))
    return json_response(serializers.address(row))


@routes.patch("/api/addresses/{address_id}")
@operation(
    body=obj(
        {
            "display_name": string(max_length=MAX_DISPLAY_NAME, nullable=True),
            "quota_bytes": integer(minimum=0, maximum=MAX_QUOTA_BYTES),
        }
    ),
    auth="session",
)
async def update_address(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed=set(store.EDITABLE))
    changes: dict[str, Any] = {}
    if "display_name" in body:
        changes["display_name"] = _display_name(body)
    if "quota_bytes" in body:
        changes["quota_bytes"] = parse_quota(body["quota_bytes"], "quota_bytes")
    updated = await service.update(ctx, *_address_id(request), changes)
    return json_response(serializers.address(updated))


@routes.delete("/api/addresses/{address_id}")
@operation(status=204, auth="session")
async def delete_address(request: web.Request) -> web.Response:
    await service.delete(mail_context(request), *_address_id(request))
    return web.Response(status=204)


@routes.post("/api/addresses/{address_id}/password")
@operation(
    body=obj({"password": string(min_length=1, max_length=MAX_PASSWORD)}, required=["password"]),
    auth="session",
)
async def change_password(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed={"password"})
    password = _password(body)
    updated = await service.change_password(ctx, *_address_id(request), password)
    return json_response(serializers.address(updated))


@routes.post("/api/addresses/{address_id}/recovery")
@operation(
    body=obj(
        {"recovery_email": string(max_length=MAX_EMAIL, nullable=True)}, required=["recovery_email"]
    ),
    auth="session",
)
async def set_recovery(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed={"recovery_email"})
    if "recovery_email" not in body:
        raise missing_required_field("recovery_email")
    recovery_email = _recovery_email(body)
    updated = await service.set_recovery(ctx, *_address_id(request), recovery_email)
    return json_response(serializers.address(updated))
