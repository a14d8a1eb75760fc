"""The session resource (RFC 8620 2): capabilities, accounts, URLs, limits."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from aiohttp import web

from mta.jmap.context import JmapContext
from mta.jmap.registry import CORE, MAIL, SUBMISSION, VACATION, Principal

# Email/query sorts the mail capability advertises (RFC 8621 4.4.2).
EMAIL_SORTS = [
    "receivedAt",
    "sentAt",
    "size",
    "from",
    "to",
    "subject",
    "hasKeyword",
    "allInThreadHaveKeyword",
    "someInThreadHaveKeyword",
]
COLLATIONS = ["i;ascii-numeric", "i;ascii-casemap", "i;unicode-casemap"]


WEBSOCKET = "urn:ietf:params:jmap:websocket"


def server_capabilities(ctx: JmapContext, base: str = "") -> dict[str, Any]:
    limits = ctx.limits
    out: dict[str, Any] = {
        CORE: {
            "maxSizeUpload": limits.max_size_upload,
            "maxConcurrentUpload": limits.max_concurrent_upload,
            "maxSizeRequest": limits.max_size_request,
            "maxConcurrentRequests": limits.max_concurrent_requests,
            "maxCallsInRequest": limits.max_calls_in_request,
            "maxObjectsInGet": limits.max_objects_in_get,
            "maxObjectsInSet": limits.max_objects_in_set,
            "collationAlgorithms": COLLATIONS,
        },
        MAIL: {},
        # Identity/* now; EmailSubmission/* when the sending work registers them.
        SUBMISSION: {},
        VACATION: {},
    }
    if base:
        ws = "ws" + base[4:] if base.startswith("http") else base
        out[WEBSOCKET] = {"url": f"{ws}/jmap/ws", "supportsPush": True}
    else:
        out[WEBSOCKET] = {}
    return out


def account_capabilities(ctx: JmapContext) -> dict[str, Any]:
    limits = ctx.limits
    out: dict[str, Any] = {
        MAIL: {
            "maxMailboxesPerEmail": limits.max_mailboxes_per_email,
            "maxMailboxDepth": limits.max_mailbox_depth,
            "maxSizeMailboxName": limits.max_size_mailbox_name,
            "maxSizeAttachmentsPerEmail": limits.max_size_attachments_per_email,
            "emailQuerySortOptions": EMAIL_SORTS,
            "mayCreateTopLevelMailbox": True,
        },
        SUBMISSION: {"maxDelayedSend": 0, "submissionExtensions": {}},
        VACATION: {},
    }
    return out


def base_url(request: web.Request, ctx: JmapContext) -> str:
    """Where this server is reached: PUBLIC_URL when the request came to its host, else the
    request's own origin (a test server on a loopback port, ``python -m mta jmap``)."""
    public = ctx.runtime.settings.public_url.rstrip("/")
    if request.host and public.split("://", 1)[-1] == request.host:
        return public
    return str(request.url.origin())


def session_state(principal: Principal) -> str:
    """Changes exactly when what the session object says changes (its accounts)."""
    seed = json.dumps([principal.username, [(a.id, a.email) for a in principal.accounts]])
    return hashlib.sha256(seed.encode()).hexdigest()[:16]


def session_object(request: web.Request, ctx: JmapContext, principal: Principal) -> dict[str, Any]:
    base = base_url(request, ctx)
    caps = account_capabilities(ctx)
    accounts = {
        a.id: {
            "name": a.email,
            "isPersonal": True,
            "isReadOnly": a.is_read_only,
            "accountCapabilities": caps,
        }
        for a in principal.accounts
    }
    primary = principal.primary.id
    return {
        "capabilities": server_capabilities(ctx, base),
        "accounts": accounts,
        "primaryAccounts": {name: primary for name in caps},
        "username": principal.username,
        "apiUrl": f"{base}/jmap",
        "downloadUrl": f"{base}/jmap/download/{{accountId}}/{{blobId}}/{{name}}?type={{type}}",
        "uploadUrl": f"{base}/jmap/upload/{{accountId}}",
        "eventSourceUrl": (
            f"{base}/jmap/eventsource?types={{types}}&closeafter={{closeafter}}&ping={{ping}}"
        ),
        "state": session_state(principal),
    }
