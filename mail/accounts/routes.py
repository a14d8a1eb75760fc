"""HTTP routes of accounts: sign-up, profile, verification, password reset, referrals."""

from __future__ import annotations

from aiohttp import web

from common.openapi import boolean, obj, operation, string
from common.web import json_response
from mail.accounts import serializers, service
from mail.auth import sessions
from mail.context import mail_context
from mail.errors import validation_error
from mail.openapi import ACCOUNT
from mail.web.body import optional_bool, optional_str, read_body, required_str

routes = web.RouteTableDef()

FORGOT_MESSAGE = "If an account exists for this address, a reset link has been sent to it."


@routes.get("/api/auth/signups")
@operation()
async def signups(request: web.Request) -> web.Response:
    status = await service.signups(mail_context(request))
    return json_response(serializers.signups(status))


@routes.post("/api/auth/signup")
@operation(
    response=ACCOUNT,
    status=201,
    body=obj(
        {
            "email": string(min_length=1, max_length=service.MAX_EMAIL),
            "password": string(min_length=1, max_length=service.MAX_PASSWORD),
            "name": string(max_length=service.MAX_NAME, nullable=True),
            "referral_code": string(max_length=100, nullable=True),
        },
        required=["email", "password"],
    ),
    errors=(409,),
)
async def signup(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed={"email", "password", "name", "referral_code"})
    email = service.normalize_email(required_str(body, "email"))
    password = required_str(body, "password", max_length=service.MAX_PASSWORD)
    service.check_new_password(password)
    name = optional_str(body, "name", max_length=service.MAX_NAME, default="") or ""
    referral_code = optional_str(body, "referral_code", max_length=100)
    account, token = await service.signup(
        ctx, request, email=email, password=password, name=name.strip(), referral_code=referral_code
    )
    response = json_response(serializers.account(account), status=201)
    sessions.PANEL.set_cookie(ctx, response, token)
    return response


@routes.get("/api/auth/me")
@operation(response=ACCOUNT, auth="session")
async def me(request: web.Request) -> web.Response:
    return json_response(serializers.account(sessions.require(request).account))


@routes.post("/api/auth/verify/send")
@operation(status=202, body=obj(), auth="session", errors=(409,))
async def verify_send(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = sessions.require_session(request)
    await read_body(request, allowed=())
    await service.resend_verification(ctx, account)
    return json_response(
        serializers.accepted(
            "email_verification", f"a verification link was sent to {account.email}"
        ),
        status=202,
    )


@routes.post("/api/auth/verify")
@operation(body=obj({"token": string(min_length=1)}, required=["token"]))
async def verify(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed={"token"})
    token = required_str(body, "token")
    account = await service.verify_email(ctx, token)
    return json_response({"object": "email_verification", "email": account.email, "verified": True})


@routes.post("/api/auth/password/forgot")
@operation(
    status=202,
    body=obj({"email": string(min_length=1, max_length=service.MAX_EMAIL)}, required=["email"]),
)
async def password_forgot(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed={"email"})
    email = service.normalize_email(required_str(body, "email"))
    await service.request_reset(ctx, email)
    return json_response(serializers.accepted("password_reset_request", FORGOT_MESSAGE), status=202)


@routes.post("/api/auth/password/reset")
@operation(
    body=obj(
        {
            "token": string(min_length=1),
            "password": string(min_length=1, max_length=service.MAX_PASSWORD),
        },
        required=["token", "password"],
    )
)
async def password_reset(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed={"token", "password"})
    token = required_str(body, "token")
    password = required_str(body, "password", max_length=service.MAX_PASSWORD)
    await service.reset_password(ctx, token, password)
    response = json_response(
        serializers.accepted("password_reset", "the password was changed; sign in again")
    )
    sessions.PANEL.clear_cookie(ctx, response)
    return response


@routes.patch("/api/account")
@operation(
    response=ACCOUNT,
    body=obj({"name": string(max_length=service.MAX_NAME, nullable=True)}),
    auth="session",
)
async def update_account(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = sessions.require_session(request)
    body = await read_body(request, allowed={"name"})
    changes = {}
    name = optional_str(body, "name", max_length=service.MAX_NAME)
    if name is not None:
        changes["name"] = name.strip()
    updated = await service.update_profile(ctx, account, changes)
    return json_response(serializers.account(updated))


@routes.delete("/api/account")
@operation(
    status=204, body=obj({"password": string(min_length=1)}, required=["password"]), auth="session"
)
async def delete_account(request: web.Request) -> web.StreamResponse:
    ctx = mail_context(request)
    account, _ = sessions.require_session(request)
    body = await read_body(request, allowed={"password"})
    await service.delete_account(ctx, account, required_str(body, "password"))
    response = web.Response(status=204)
    sessions.PANEL.clear_cookie(ctx, response)
    return response


@routes.post("/api/account/email")
@operation(
    status=202,
    body=obj(
        {
            "email": string(min_length=1, max_length=service.MAX_EMAIL),
            "password": string(min_length=1),
        },
        required=["email", "password"],
    ),
    auth="session",
    errors=(409,),
)
async def change_email(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = sessions.require_session(request)
    body = await read_body(request, allowed={"email", "password"})
    new_email = service.normalize_email(required_str(body, "email"))
    password = required_str(body, "password")
    await service.change_email(ctx, account, new_email, password)
    return json_response(serializers.email_change(new_email), status=202)


@routes.post("/api/account/password")
@operation(
    body=obj(
        {
            "current_password": string(min_length=1),
            "new_password": string(min_length=1, max_length=service.MAX_PASSWORD),
        },
        required=["current_password", "new_password"],
    ),
    auth="session",
)
async def change_password(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, session = sessions.require_session(request)
    body = await read_body(request, allowed={"current_password", "new_password"})
    current = required_str(body, "current_password")
    new = required_str(body, "new_password", max_length=service.MAX_PASSWORD)
    await service.change_password(ctx, account, session.id, current, new)
    return json_response(serializers.accepted("password_change", "the password was changed"))


@routes.patch("/api/account/notifications")
@operation(
    body=obj({k: boolean(nullable=True) for k in service.NOTIFICATION_DEFAULTS}), auth="session"
)
async def update_notifications(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = sessions.require_session(request)
    body = await read_body(request, allowed=service.NOTIFICATION_DEFAULTS)
    changes = {}
    for key in body:
        value = optional_bool(body, key)
        if value is None:
            raise validation_error(f"{key} must be true or false")
        changes[key] = value
    prefs = await service.update_notifications(ctx, account, changes)
    return json_response(serializers.notifications(prefs))


@routes.get("/api/account/referrals")
@operation(auth="session")
async def referrals(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    account, _ = sessions.require_session(request)
    signups_count, verified = await service.referral_counts(ctx, account)
    url = service.referral_url(ctx, account)
    return json_response(serializers.referrals(account, url, signups_count, verified))
