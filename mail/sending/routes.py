"""HTTP routes of the sending API, Resend's: send, batch, list, read, reschedule, cancel.

``/api/emails/batch`` is declared before ``/api/emails/{email_id}``, and
aiohttp tries literal resources first anyway, so "batch" is never an id.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from aiohttp import web

from common.openapi import array, integer, obj, operation, string
from common.web import BadJSON, check_json, is_json_type, json_response, read_body
from mail.apikeys.access import require_full, require_key
from mail.context import mail_context
from mail.errors import MailError, field_error, validation_error
from mail.sending import fields, serializers, service
from mail.sending.fields import missing
from mail.web.ownership import parse_id

routes = web.RouteTableDef()

# Base64 makes 40 MB of attachments about 54 MB of JSON.
MAX_REQUEST_BYTES = 60 * 1024 * 1024
DEFAULT_LIMIT = 20  # Resend's

_ADDRESSES = {"oneOf": [string(max_length=320), array(string(max_length=320))]}
EMAIL = obj(
    {
        "from": string(max_length=320),
        "to": _ADDRESSES,
        "cc": _ADDRESSES,
        "bcc": _ADDRESSES,
        "reply_to": _ADDRESSES,
        "subject": string(max_length=fields.MAX_SUBJECT),
        "html": string(),
        "text": string(),
        "tags": array(obj({"name": string(), "value": string()}, required=["name"])),
        "headers": obj(additional=string()),
        "attachments": array(
            obj(
                {
                    "filename": string(),
                    "content": {"oneOf": [string(), array(integer(minimum=0, maximum=255))]},
                    "path": string(),
                    "content_type": string(),
                    "content_id": string(),
                    "inline_content_id": string(),
                }
            )
        ),
        "scheduled_at": string(description="ISO 8601, or `in <n> <unit>`"),
    },
    required=["from", "to", "subject"],
)
_WHEN = string(fmt="date-time")
_MAYBE_WHEN = string(fmt="date-time", nullable=True)
_MAYBE_LIST = {"type": ["array", "null"], "items": string()}
LAST_EVENTS = (
    "scheduled", "queued", "sent", "delivered", "delivery_delayed", "bounced", "failed",
    "canceled", "complained", "suppressed",
)  # fmt: skip
_ITEM_FIELDS = {
    "object": {"const": "email"},
    "id": string(fmt="uuid"),
    "to": array(string()),
    "from": string(),
    "created_at": _WHEN,
    "subject": string(),
    "bcc": _MAYBE_LIST,
    "cc": _MAYBE_LIST,
    "reply_to": _MAYBE_LIST,
    "last_event": string(enum=LAST_EVENTS),
    "scheduled_at": _MAYBE_WHEN,
}
# serializers.list_item / serializers.email: Resend's email object, and ours beyond it.
EMAIL_ITEM = obj(_ITEM_FIELDS, required=list(_ITEM_FIELDS))
EMAIL_DETAIL = obj(
    {
        **_ITEM_FIELDS,
        "message_id": string(),
        "html": string(nullable=True),
        "text": string(nullable=True),
        "tags": array(obj({"name": string(), "value": string()}, required=["name", "value"])),
        "headers": obj(additional=string()),
        "attachments": array(
            obj(
                {"filename": string(), "content_type": string(), "size": integer(minimum=0)},
                required=["filename", "content_type", "size"],
            )
        ),
        "recipients": array(
            obj(
                {
                    "email": string(),
                    "status": string(),
                    "attempts": integer(minimum=0),
                    "last_attempt_at": _MAYBE_WHEN,
                    "next_attempt_at": _MAYBE_WHEN,
                    "last_reply": string(nullable=True),
                },
                required=["email", "status", "attempts", "last_reply"],
            )
        ),
        "events": array(
            obj(
                {"id": string(), "type": string(), "created_at": _WHEN, "data": {}},
                required=["id", "type", "created_at"],
            )
        ),
    },
    required=[*_ITEM_FIELDS, "html", "text", "tags", "recipients", "events"],
)
EMAIL_PAGE = obj(
    {"object": {"const": "list"}, "has_more": {"type": "boolean"}, "data": array(EMAIL_ITEM)},
    required=["object", "has_more", "data"],
)
EMAIL_REF = obj({"object": {"const": "email"}, "id": string(fmt="uuid")}, required=["object", "id"])
SENT = obj({"id": string(fmt="uuid")}, required=["id"])
SENT_BATCH = obj(
    {
        "data": array(SENT),
        "errors": array(
            obj({"index": integer(minimum=0), "message": string()}, required=["index", "message"])
        ),
    },
    required=["data"],
)
# 402/413: the plan lacks api_sending, or its sends_per_month are used (mail/billing/).
SEND_ERRORS = [401, 402, 403, 409, 422]


async def _json(request: web.Request) -> Any:
    """The body as any JSON value (batch sends an array), refused unparsed unless JSON."""
    raw = await read_body(request, max_bytes=MAX_REQUEST_BYTES)
    if not is_json_type(request.content_type):
        raise validation_error("send the body as application/json")
    try:
        data = json.loads(raw)
        check_json(data)
    except BadJSON as exc:
        raise validation_error(str(exc)) from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise validation_error("body is not valid JSON") from None
    return data


def _sending_request(request: web.Request, route: str, body: Any) -> service.Request:
    auth = require_key(request)
    mode = request.headers.get("x-batch-validation", "strict").lower()
    if mode not in ("strict", "permissive"):
        raise field_error("x-batch-validation must be strict or permissive")
    return service.Request(
        auth=auth,
        route=route,
        body=body,
        idempotency_key=service.check_idempotency_key(request.headers.get("Idempotency-Key")),
        permissive=mode == "permissive",
    )


@routes.post("/api/emails")
@operation(body=EMAIL, response=SENT, auth="api_key", errors=SEND_ERRORS)
async def send_email(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    require_key(request)
    body = await _json(request)
    if not isinstance(body, dict):
        raise validation_error("body must be a JSON object")
    answer = await service.send(ctx, _sending_request(request, "emails", body), [body])
    return json_response(answer)


@routes.post("/api/emails/batch")
@operation(
    body=array(EMAIL, max_items=service.MAX_BATCH),
    response=SENT_BATCH,
    auth="api_key",
    errors=SEND_ERRORS,
)
async def send_batch(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    require_key(request)
    body = await _json(request)
    if not isinstance(body, list):
        raise validation_error("body must be a JSON array of emails")
    if not body:
        raise field_error("The batch is empty: send from 1 to 100 emails.")
    if len(body) > service.MAX_BATCH:
        raise field_error(f"Too many emails in the batch: at most {service.MAX_BATCH}.")
    answer = await service.send(ctx, _sending_request(request, "emails/batch", body), body)
    return json_response(answer)


@routes.get("/api/emails/batch")
@routes.patch("/api/emails/batch")
@operation(status=405, auth="api_key")
async def batch_wrong_method(request: web.Request) -> web.Response:
    # Without these, GET and PATCH /api/emails/{email_id} would take "batch" for an id.
    raise MailError("method_not_allowed", "use POST to send a batch", headers={"Allow": "POST"})


def _cursor(request: web.Request, name: str) -> str | None:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return None
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise field_error(f"The `{name}` parameter must be an email id.") from None


def _limit(request: web.Request) -> int:
    raw = request.query.get("limit")
    if raw is None or raw == "":
        return DEFAULT_LIMIT
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= 100:
        raise field_error("The `limit` parameter must be a number from 1 to 100.")
    return value


@routes.get("/api/emails")
@operation(
    query={
        "limit": string(pattern="^[0-9]{0,6}$", description="1 to 100; default 20"),
        "after": string(description="an email id: the page after (older than) it"),
        "before": string(description="an email id: the page before (newer than) it"),
    },
    response=EMAIL_PAGE,
    auth="api_key",
    errors=[401, 403, 422],
)
async def list_emails(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = require_full(request)
    limit, after, before = _limit(request), _cursor(request, "after"), _cursor(request, "before")
    if after and before:
        raise field_error("You can only use either `after` or `before`, not both.")
    emails, states, has_more = await service.list_emails(
        ctx, auth, limit=limit, after=after, before=before
    )
    items = [serializers.list_item(e, states.get(e.id, "queued")) for e in emails]
    return json_response(serializers.page(items, has_more))


@routes.get("/api/emails/{email_id}")
@operation(response=EMAIL_DETAIL, auth="api_key", errors=[401, 403])
async def get_email(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = require_full(request)
    detail = await service.get(ctx, auth, parse_id(request, "email_id", "email"))
    return json_response(serializers.email(detail))


@routes.patch("/api/emails/{email_id}")
@operation(
    body=obj({"scheduled_at": string(), "id": string()}, required=["scheduled_at"]),
    response=EMAIL_REF,
    auth="api_key",
    errors=[401, 403, 422],
)
async def update_email(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = require_full(request)
    email_id = parse_id(request, "email_id", "email")
    body = await _json(request)
    if not isinstance(body, dict):
        raise validation_error("body must be a JSON object")
    # The SDKs send the email's id in the body too.
    if body.get("id") not in (None, email_id):
        raise field_error("The `id` in the body is not the email's id.")
    unknown = sorted(set(body) - {"scheduled_at", "id"})
    if unknown:
        raise field_error(f"Unknown or unsupported field: `{unknown[0]}`.")
    if body.get("scheduled_at") in (None, ""):
        raise missing("scheduled_at")
    await service.move(ctx, auth, email_id, body["scheduled_at"])
    return json_response(serializers.email_ref(email_id))


@routes.post("/api/emails/{email_id}/cancel")
@operation(response=EMAIL_REF, auth="api_key", errors=[401, 403, 422])
async def cancel_email(request: web.Request) -> web.Response:
    ctx = mail_context(request)
    auth = require_full(request)
    email_id = parse_id(request, "email_id", "email")
    await service.cancel(ctx, auth, email_id)
    return json_response(serializers.email_ref(email_id))
