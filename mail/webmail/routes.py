"""The webmail API under /api/mail/ (spec, "Webmail"; docs/mail.md, "Webmail").

Every route but login takes the svc_webmail cookie and nothing else: a panel
session is 401 here, and the webmail cookie is nothing to the panel. One part
route also takes a short-lived signed URL instead (cid: images in the
sandboxed reading frame, which sends no cookie).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from aiohttp import web

from common.openapi import array, boolean, obj, operation, string
from common.web import json_response
from mail.context import mail_context
from mail.errors import invalid_parameter, validation_error
from mail.openapi import LIST, list_query
from mail.web.body import read_body, required_str
from mail.web.lists import list_envelope, parse_list_params
from mail.web.ownership import parse_id, parse_uuid
from mail.webmail import auth, forms, live, messages, serializers, sessions
from mail.webmail.messages import Filters

routes = web.RouteTableDef()

_ID = string(pattern="^[0-9a-f-]{36}$")
IDS = array(_ID, max_items=messages.MAX_IDS)
ADDRESSES = {"oneOf": [string(max_length=10000), array(string(max_length=320), max_items=100)]}
COMPOSE = obj(
    {
        "to": ADDRESSES,
        "cc": ADDRESSES,
        "bcc": ADDRESSES,
        "subject": string(max_length=998),
        "text": string(nullable=True),
        "html": string(nullable=True),
        "reply_to_id": string(nullable=True),
        "forward_id": string(nullable=True),
        "draft_id": string(nullable=True),
        "drop_attachments": array(string(max_length=20)),
    }
)
MESSAGE_FILTERS = {
    "folder_id": string(description="a folder id; default the Inbox (all folders when searching)"),
    "unread": string(enum=["true", "false"]),
    "flagged": string(enum=["true", "false"]),
    "has_attachment": string(enum=["true", "false"]),
    "from": string(max_length=320),
    "to": string(max_length=320),
    "since": string(fmt="date-time", description="received at or after (ISO 8601)"),
    "before": string(fmt="date-time", description="received before (ISO 8601)"),
}
BINARY = {"type": "string", "format": "binary"}


@routes.post("/api/mail/login")
@operation(
    body=obj(
        {
            "email": string(min_length=1, max_length=254),
            "password": string(min_length=1, max_length=256),
        },
        required=["email", "password"],
    ),
    errors=(401,),
)
async def login(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    body = await read_body(request, allowed={"email", "password"})
    email = required_str(body, "email", max_length=254)
    password = required_str(body, "password", max_length=256)
    session, token = await auth.login(ctx, request, email, password)
    response = json_response(serializers.me(session))
    sessions.WEBMAIL_SESSIONS.set_cookie(ctx, response, token)
    return response


@routes.post("/api/mail/logout")
@operation(status=204, auth="webmail")
async def logout(request: web.Request) -> web.StreamResponse:
    ctx = mail_context(request)
    session = sessions.require(request)
    await auth.logout(ctx, session.id)
    response = web.Response(status=204)
    sessions.WEBMAIL_SESSIONS.clear_cookie(ctx, response)
    return response


@routes.get("/api/mail/me")
@operation(auth="webmail")
async def me(request: web.Request) -> web.Response:
    return json_response(serializers.me(sessions.require(request)))


@routes.get("/api/mail/folders")
@operation(auth="webmail")
async def list_folders(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    session = sessions.require(request)
    data = [serializers.folder(f) for f in await messages.folders(ctx, session)]
    return json_response({"object": "list", "data": data, "total": len(data)})


@routes.post("/api/mail/folders")
@operation(
    body=obj({"name": string(min_length=1, max_length=255)}, required=["name"]),
    status=201,
    auth="webmail",
    errors=(409,),
)
async def create_folder(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    session = sessions.require(request)
    body = await read_body(request, allowed={"name"})
    name = required_str(body, "name", max_length=255).strip()
    folder = await messages.create_folder(ctx, session, name)
    return json_response(serializers.folder(folder), status=201)


@routes.delete("/api/mail/folders/{folder_id}")
@operation(status=204, auth="webmail", errors=(409,))
async def delete_folder(request: web.Request) -> web.StreamResponse:
    ctx = mail_context(request)
    session = sessions.require(request)
    folder_id = parse_id(request, "folder_id")
    await messages.delete_folder(ctx, session, folder_id)
    return web.Response(status=204)


def _bool(query: Any, name: str) -> bool | None:
    value = query.get(name)
    if value in (None, ""):
        return None
    if value not in ("true", "false"):
        raise invalid_parameter(f"{name} must be true or false")
    return bool(value == "true")


def _when(query: Any, name: str) -> datetime | None:
    value = query.get(name)
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise invalid_parameter(f"{name} must be an ISO 8601 date or date-time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def _text(query: Any, name: str) -> str | None:
    value = (query.get(name) or "").strip()
    if len(value) > 320:
        raise invalid_parameter(f"{name} must be at most 320 characters")
    return value or None


@routes.get("/api/mail/messages")
@operation(response=LIST, query={**list_query(messages.SORTS), **MESSAGE_FILTERS}, auth="webmail")
async def list_messages(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    session = sessions.require(request)
    params = parse_list_params(request.query, messages.SORTS)
    query = request.query
    folder_id = query.get("folder_id") or None
    if folder_id is not None:
        folder_id = parse_uuid(folder_id, "folder")
    filters = Filters(
        folder_id=folder_id,
        unread=_bool(query, "unread"),
        flagged=_bool(query, "flagged"),
        has_attachment=_bool(query, "has_attachment"),
        sender=_text(query, "from"),
        recipient=_text(query, "to"),
        since=_when(query, "since"),
        before=_when(query, "before"),
    )
    rows, total = await messages.list_messages(ctx, session, params, filters)
    return json_response(list_envelope([serializers.summary(r) for r in rows], params, total))


# Literal paths before the dynamic ones (mail/README.md, routing).
@routes.post("/api/mail/messages/flags")
@operation(
    body=obj(
        {"ids": IDS, "seen": boolean(), "flagged": boolean(), "answered": boolean()},
        required=["ids"],
    ),
    auth="webmail",
)
async def set_flags(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    session = sessions.require(request)
    body = await read_body(request, allowed={"ids", *messages.FLAGS})
    ids = messages.check_ids(body.get("ids"))
    flags = {}
    for name in messages.FLAGS:
        if name in body:
            if not isinstance(body[name], bool):
                raise validation_error(f"{name} must be true or false")
            flags[name] = body[name]
    if not flags:
        raise validation_error("name at least one of seen, flagged, answered")
    await messages.set_flags(ctx, session, ids, flags)
    return json_response({"object": "flags", "ids": ids, **flags})


@routes.post("/api/mail/messages/move")
@operation(body=obj({"ids": IDS, "folder_id": _ID}, required=["ids", "folder_id"]), auth="webmail")
async def move(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    session = sessions.require(request)
    body = await read_body(request, allowed={"ids", "folder_id"})
    ids = messages.check_ids(body.get("ids"))
    folder_id = parse_uuid(required_str(body, "folder_id", max_length=36), "folder")
    await messages.move(ctx, session, ids, folder_id)
    return json_response({"object": "move", "ids": ids, "folder_id": folder_id})


@routes.post("/api/mail/messages/delete")
@operation(body=obj({"ids": IDS}, required=["ids"]), auth="webmail")
async def delete(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    session = sessions.require(request)
    body = await read_body(request, allowed={"ids"})
    ids = messages.check_ids(body.get("ids"))
    trashed, deleted = await messages.delete(ctx, session, ids)
    return json_response({"object": "deletion", "moved_to_trash": trashed, "deleted": deleted})


@routes.get("/api/mail/messages/{message_id}")
@operation(query={"remote_content": string(enum=["true", "false"])}, auth="webmail")
async def get_message(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    session = sessions.require(request)
    message_id = parse_id(request, "message_id")
    remote = _bool(request.query, "remote_content") or False
    found = await messages.read(ctx, session, message_id, allow_remote=remote)
    return json_response(serializers.message(found))


@routes.get("/api/mail/messages/{message_id}/raw")
@operation(auth="webmail", response=BINARY, response_media="message/rfc822")
async def raw(request: web.Request) -> web.StreamResponse:
    ctx = mail_context(request)
    session = sessions.require(request)
    message_id = parse_id(request, "message_id")
    data = await messages.raw(ctx, session, message_id)
    return await _stream(
        request, data, "message/rfc822", f'attachment; filename="{message_id}.eml"'
    )


# Served as themselves, inline: images a browser draws without running anything.
INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"})
# Never served as their own type from this origin (they could run script).
PLAIN_TYPES = frozenset({"text/html", "application/xhtml+xml", "image/svg+xml", "text/xml",
                         "application/xml", "text/javascript", "application/javascript"})  # fmt: skip
PART_CSP = "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'"


def content_disposition(kind: str, filename: str | None) -> str:
    if not filename:
        return kind
    fallback = "".join(
        c if c.isascii() and c.isprintable() and c not in '"\\;' else "_" for c in filename
    )
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


@routes.get("/api/mail/messages/{message_id}/part/{section}")
@operation(
    query={
        "download": string(enum=["true", "false"]),
        "mailbox": string(max_length=36),
        "expires": string(max_length=20),
        "signature": string(max_length=64),
    },
    auth="webmail",
    response=BINARY,
    response_media="application/octet-stream",
)
async def part(request: web.Request) -> web.StreamResponse:
    ctx = mail_context(request)
    message_id = parse_id(request, "message_id")
    section = request.match_info["section"]
    if not section.isdigit() or len(section) > 6:
        raise invalid_parameter("section must be a part number")
    address_id = None
    if "signature" in request.query:
        address_id = messages.signed_mailbox(ctx, message_id, section, request.query)
    if address_id is None:
        address_id = sessions.require(request).address_id
    found = await messages.part(ctx, address_id, message_id, section)
    media = found.media_type.lower()
    download = _bool(request.query, "download") or False
    if media in INLINE_TYPES and not download:
        return await _stream(
            request, found.content, media, content_disposition("inline", found.filename)
        )
    if media.startswith("text/plain") and not download:
        return await _stream(
            request,
            found.content,
            "text/plain; charset=utf-8",
            content_disposition("inline", found.filename),
        )
    served = "text/plain" if media in PLAIN_TYPES else media
    if not served or "/" not in served:
        served = "application/octet-stream"
    return await _stream(
        request,
        found.content,
        served,
        content_disposition("attachment", found.filename or f"part-{section}"),
    )


async def _stream(
    request: web.Request, data: bytes, media: str, disposition: str
) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={
            "Content-Type": media,
            "Content-Disposition": disposition,
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": PART_CSP,
            "Cache-Control": "private, max-age=300",
        }
    )
    response.content_length = len(data)
    await response.prepare(request)
    view = memoryview(data)
    for start in range(0, len(view), forms.CHUNK):
        await response.write(view[start : start + forms.CHUNK])
    await response.write_eof()
    return response


@routes.post("/api/mail/send")
@operation(body=COMPOSE, status=201, auth="webmail", errors=(413,))
async def send(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    session = sessions.require(request)
    compose = await forms.read_compose(request)
    sent_id = await messages.send(ctx, session, compose)
    return json_response({"object": "sent", "id": sent_id}, status=201)


@routes.post("/api/mail/drafts")
@operation(body=COMPOSE, status=201, auth="webmail", errors=(413,))
async def save_draft(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    session = sessions.require(request)
    compose = await forms.read_compose(request)
    draft_id = await messages.save_draft(ctx, session, compose)
    return json_response({"object": "draft", "id": draft_id}, status=201)


@routes.get("/api/mail/events")
@operation(auth="webmail", response={"type": "string"}, response_media="text/event-stream")
async def events(request: web.Request) -> web.StreamResponse:
    """Server-sent events: ``ready``, then ``change`` whenever the mailbox changes."""
    ctx = mail_context(request)
    session = sessions.require(request)
    return await live.stream(request, ctx, session.address_id)
