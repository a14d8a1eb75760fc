"""Thin HTTP handlers: parse the request, call the module that does the work, shape the reply.

Token-style endpoints (token, revoke, introspect, device authorize) take
``application/x-www-form-urlencoded`` bodies (RFC 6749 3.2); the consent and
admin routes take JSON (form bodies are accepted on consent routes too, for
plain HTML forms). A parameter sent twice is invalid_request (RFC 6749 3.1).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from aiohttp import web

from common import web as common_web
from common.openapi import array, obj, operation, string
from common.web import BadInput, json_response, read_json_object
from oauth import clients, rfc7009, rfc7662, rfc8414, rfc8628
from oauth.errors import NO_STORE, InvalidRequest, NotFound
from oauth.rfc6749 import authorize
from oauth.rfc6749.client_auth import authenticate_client, read_credentials
from oauth.rfc6749.token import issue_token
from oauth.server import AuthorizationServer

FORM = "application/x-www-form-urlencoded"

# OpenAPI declarations shared by several views (common/openapi.py). Unknown
# parameters are ignored (RFC 6749 3.1), hence additional members.
AUTHORIZE = {
    "client_id": string(min_length=1),
    "redirect_uri": string(),
    "response_type": string(),
    "scope": string(),
    "state": string(),
    "code_challenge": string(),
    "code_challenge_method": string(),
}
USER_CODE = obj({"user_code": string()}, additional=True)
CLIENT_IN_FORM = {"client_id": string(), "client_secret": string()}
TOKEN_FORM = obj(
    {"token": string(min_length=1), "token_type_hint": string(), **CLIENT_IN_FORM},
    required=["token"],
    additional=True,
)


def reply(data: Any, status: int = 200) -> web.Response:
    return json_response(data, status=status, headers=dict(NO_STORE))


def _single(pairs: Iterable[tuple[str, Any]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in pairs:
        if key in out:
            raise InvalidRequest(f"{key} is repeated")
        if not isinstance(value, str):
            raise InvalidRequest(f"{key} must be a string")
        out[key] = value
    return out


async def _form(request: web.Request) -> dict[str, str]:
    try:
        return _single(await common_web.read_form(request))
    except BadInput as exc:
        raise InvalidRequest(str(exc)) from None


async def read_form(request: web.Request) -> dict[str, str]:
    if request.content_type != FORM:
        raise InvalidRequest(f"the body must be {FORM}")
    return await _form(request)


async def read_params(request: web.Request) -> dict[str, str]:
    """A consent route's parameters: a JSON object or a form body."""
    if request.content_type == FORM:
        return await _form(request)
    body = await read_admin_body(request)
    return _single((k, v) for k, v in body.items() if v is not None)


async def read_admin_body(request: web.Request) -> dict[str, Any]:
    try:
        return await read_json_object(request)
    except BadInput as exc:
        raise InvalidRequest(str(exc)) from None


def _client_pk(request: web.Request) -> int:
    raw = request.match_info["id"]
    if not raw.isdigit() or len(raw) > 18:
        raise NotFound("no such client")
    return int(raw)


# --- consent routes (requireUser) --------------------------------------------


@operation(query=AUTHORIZE, required_query=["client_id"], auth="user", errors=(403,))
async def authorize_info(server: AuthorizationServer, request: web.Request) -> web.Response:
    call = server.call(request)
    req = await authorize.validate(server, call, _single(request.query.items()))
    return reply(authorize.info(req))


@operation(body=obj(AUTHORIZE, required=["client_id"], additional=True), auth="user")
async def authorize_approve(server: AuthorizationServer, request: web.Request) -> web.Response:
    call = server.call(request)
    user_id = server.user_id(request)
    req = await authorize.validate(server, call, await read_params(request))
    return reply(await authorize.approve(server, call, req, user_id))


@operation(body=obj(AUTHORIZE, required=["client_id"], additional=True), auth="user")
async def authorize_deny(server: AuthorizationServer, request: web.Request) -> web.Response:
    call = server.call(request)
    user_id = server.user_id(request)
    req = await authorize.validate(server, call, await read_params(request))
    return reply(await authorize.deny(server, call, req, user_id))


@operation(query={"user_code": string()}, auth="user", errors=(410,))
async def device_info(server: AuthorizationServer, request: web.Request) -> web.Response:
    user_id = server.user_id(request)
    user_code = _single(request.query.items()).get("user_code")
    return reply(await rfc8628.device_info(server, user_code, user_id))


@operation(body=USER_CODE, auth="user", errors=(410,))
async def device_approve(server: AuthorizationServer, request: web.Request) -> web.Response:
    user_id = server.user_id(request)
    params = await read_params(request)
    return reply(
        await rfc8628.decide(
            server, server.call(request), params.get("user_code"), user_id, approve=True
        )
    )


@operation(body=USER_CODE, auth="user", errors=(410,))
async def device_deny(server: AuthorizationServer, request: web.Request) -> web.Response:
    user_id = server.user_id(request)
    params = await read_params(request)
    return reply(
        await rfc8628.decide(
            server, server.call(request), params.get("user_code"), user_id, approve=False
        )
    )


# --- client endpoints (client credentials, or open) ------------------------


@operation(
    body=obj(
        {
            "grant_type": string(min_length=1),
            "code": string(),
            "redirect_uri": string(),
            "code_verifier": string(),
            "refresh_token": string(),
            "device_code": string(),
            "scope": string(),
            **CLIENT_IN_FORM,
        },
        required=["grant_type"],
        additional=True,
    ),
    body_media=FORM,
    auth="client",
)
async def token(server: AuthorizationServer, request: web.Request) -> web.Response:
    form = await read_form(request)
    call = server.call(request)
    return reply(await issue_token(server, call, request.headers.get("Authorization"), form))


@operation(body=TOKEN_FORM, body_media=FORM, auth="client")
async def revoke(server: AuthorizationServer, request: web.Request) -> web.Response:
    form = await read_form(request)
    call = server.call(request)
    token_value = form.get("token")
    if not token_value:
        raise InvalidRequest("token is required")
    creds = read_credentials(request.headers.get("Authorization"), form)
    client = None
    if creds.client_id is not None:
        client = await authenticate_client(server, call, creds)
    await rfc7009.revoke(server, call, client, token_value, form.get("token_type_hint"))
    return web.Response(status=200, headers=dict(NO_STORE))


@operation(body=TOKEN_FORM, body_media=FORM, auth="client")
async def introspect(server: AuthorizationServer, request: web.Request) -> web.Response:
    form = await read_form(request)
    call = server.call(request)
    client = await authenticate_client(
        server, call, read_credentials(request.headers.get("Authorization"), form)
    )
    token_value = form.get("token")
    if not token_value:
        raise InvalidRequest("token is required")
    return reply(await rfc7662.introspect(server, client, token_value, form.get("token_type_hint")))


@operation(
    body=obj({"scope": string(), **CLIENT_IN_FORM}, additional=True), body_media=FORM, auth="client"
)
async def device_authorize(server: AuthorizationServer, request: web.Request) -> web.Response:
    form = await read_form(request)
    call = server.call(request)
    client = await authenticate_client(
        server, call, read_credentials(request.headers.get("Authorization"), form)
    )
    return reply(await rfc8628.authorize_device(server, request, client, form))


@operation(
    # RFC 8414 2: the members a client needs; the document has more.
    response=obj(
        {
            "issuer": string(),
            "token_endpoint": string(),
            "response_types_supported": array(string()),
            "grant_types_supported": array(string()),
            "code_challenge_methods_supported": array(string()),
        },
        required=["issuer", "token_endpoint", "response_types_supported"],
        additional=True,
    ),
    never=(404,),
)
async def metadata(server: AuthorizationServer, request: web.Request) -> web.Response:
    body = rfc8414.metadata(server, server.issuer(request))
    return json_response(body, headers={"Cache-Control": "public, max-age=300"})


# --- admin routes (requireAdmin) ----------------------------------------------


def _actor(server: AuthorizationServer, request: web.Request) -> int | None:
    raw = server.config.user_id_from_conn(request)
    try:
        return int(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None


@operation(auth="admin")
async def list_clients(server: AuthorizationServer, request: web.Request) -> web.Response:
    return reply({"clients": await clients.list_clients(server)})


@operation(status=201, body={"type": "object"}, auth="admin", errors=(409,))
async def create_client(server: AuthorizationServer, request: web.Request) -> web.Response:
    body = await read_admin_body(request)
    created = await clients.create_client(
        server, server.call(request), body, _actor(server, request)
    )
    return reply(created, status=201)


@operation(body={"type": "object"}, auth="admin", errors=(409,))
async def update_client(server: AuthorizationServer, request: web.Request) -> web.Response:
    id_ = _client_pk(request)
    body = await read_admin_body(request)
    return reply(
        await clients.update_client(
            server, server.call(request), id_, body, _actor(server, request)
        )
    )


@operation(auth="admin")
async def rotate_secret(server: AuthorizationServer, request: web.Request) -> web.Response:
    id_ = _client_pk(request)
    return reply(
        await clients.rotate_secret(server, server.call(request), id_, _actor(server, request))
    )


@operation(auth="admin")
async def revoke_client(server: AuthorizationServer, request: web.Request) -> web.Response:
    id_ = _client_pk(request)
    return reply(
        await clients.revoke_client(server, server.call(request), id_, _actor(server, request))
    )
