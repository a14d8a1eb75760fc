"""HTTP routes of addresses: per domain, and by address id.

The folders and activity routes of the Addresses table live with the mailbox
store (mail/mailboxes/); they find the address with :func:`owned_address`.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from email_validator import EmailNotValidError, validate_email

from common.db import Conn
from common.openapi import integer, obj, operation, string
from common.passwords import hash_password
from common.web import json_response
from mail.accounts.service import MAX_PASSWORD, check_new_password
from mail.addresses import serializers, store
from mail.addresses.localpart import MAX_LOCAL_PART, InvalidLocalPart, normalize_local_part
from mail.auth import sessions
from mail.context import mail_context
from mail.domains import store as domains_store
from mail.domains.service import MAX_QUOTA_BYTES, parse_quota
from mail.errors import conflict, missing_required_field, not_found, validation_error
from mail.openapi import list_query
from mail.web.body import optional_str, read_body, required_str
from mail.web.lists import list_envelope, parse_list_params
from mail.web.ownership import parse_id
from mta.store import mailboxes

routes = web.RouteTableDef()

MAX_DISPLAY_NAME = 100
MAX_EMAIL = 254


async def owned_address(
    request: web.Request, conn: Conn, *, for_update: bool = False
) -> dict[str, Any]:
    """The address named by ``address_id`` if the signed-in account owns its domain; else 404."""
    account = sessions.require(request).account
    row = await store.get_owned(
        conn, account.id, parse_id(request, "address_id"), for_update=for_update
    )
    if row is None:
        raise not_found("address")
    return row


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
@operation(query=list_query(store.ADDRESS_SORTS), auth="session")
async def list_addresses(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account = sessions.require(request).account
    params = parse_list_params(request.query, store.ADDRESS_SORTS)
    async with ctx.db.connection() as conn:
        domain = await domains_store.get_owned(conn, account.id, parse_id(request, "domain_id"))
        if domain is None:
            raise not_found("domain")
        rows, total = await store.list_for_domain(conn, domain["id"], params)
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
    domain_id = parse_id(request, "domain_id")
    async with ctx.db.connection() as conn:
        # Check before the slow hash, so a wrong domain answers at once.
        if await domains_store.get_owned(conn, account.id, domain_id) is None:
            raise not_found("domain")
    password_hash = await hash_password(password)
    now = ctx.clock.now()
    async with ctx.db.transaction() as conn:
        domain = await domains_store.get_owned(conn, account.id, domain_id, for_update=True)
        if domain is None:
            raise not_found("domain")
        if await store.exists(conn, domain_id, local_part):
            raise conflict(f"{local_part}@{domain['name']} already exists")
        address_id = await store.insert(
            conn,
            domain_id=domain_id,
            local_part=local_part,
            display_name=display_name,
            password_hash=password_hash,
            quota_bytes=domain["default_quota_bytes"] if quota_bytes is None else quota_bytes,
            recovery_email=recovery_email,
            now=now,
        )
        # Inbox, Drafts, Sent... exist from the start (the mailbox store's defaults).
        await mailboxes.create_default_mailboxes(conn, address_id, now)
        row = await store.get(conn, address_id)
    assert row is not None
    return json_response(serializers.address(row), status=201)


@routes.get("/api/addresses/{address_id}")
@operation(auth="session")
async def read_address(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    async with ctx.db.connection() as conn:
        row = await owned_address(request, conn)
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
    async with ctx.db.transaction() as conn:
        row = await owned_address(request, conn, for_update=True)
        await store.update(conn, row["id"], changes, ctx.clock.now())
        updated = await store.get(conn, row["id"])
    assert updated is not None
    return json_response(serializers.address(updated))


@routes.delete("/api/addresses/{address_id}")
@operation(status=204, auth="session")
async def delete_address(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    # Its mailboxes, messages and their rows in schema mta cascade in this statement.
    async with ctx.db.transaction() as conn:
        row = await owned_address(request, conn, for_update=True)
        await store.delete(conn, row["id"])
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
    async with ctx.db.connection() as conn:
        await owned_address(request, conn)
    password_hash = await hash_password(password)
    async with ctx.db.transaction() as conn:
        row = await owned_address(request, conn, for_update=True)
        await store.update(conn, row["id"], {"password_hash": password_hash}, ctx.clock.now())
        updated = await store.get(conn, row["id"])
    assert updated is not None
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
    async with ctx.db.transaction() as conn:
        row = await owned_address(request, conn, for_update=True)
        if (
            recovery_email is not None
            and recovery_email == f"{row['local_part']}@{row['domain_name']}"
        ):
            raise validation_error("the recovery address must be another mailbox than this one")
        await store.update(conn, row["id"], {"recovery_email": recovery_email}, ctx.clock.now())
        updated = await store.get(conn, row["id"])
    assert updated is not None
    return json_response(serializers.address(updated))
