"""Audit events: one name per security-relevant move, handed to the host's hook.

Every event is a plain dict: ``event`` (one of the names below), ``at`` (ISO
8601, from the injected clock), ``client_id``, ``user_id``, ``ip``,
``user_agent`` and, where useful, ``details``. No token, code or secret ever
enters an event. A failing hook is logged and never fails the request.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from oauth.config import AuditHook

log = logging.getLogger(__name__)

CLIENT_CREATED: Final = "oauth.client.created"
CLIENT_UPDATED: Final = "oauth.client.updated"
CLIENT_SECRET_ROTATED: Final = "oauth.client.secret_rotated"
CLIENT_REVOKED: Final = "oauth.client.revoked"
CLIENT_AUTH_FAILED: Final = "oauth.client.authentication_failed"
AUTHORIZATION_APPROVED: Final = "oauth.authorization.approved"
AUTHORIZATION_DENIED: Final = "oauth.authorization.denied"
TOKEN_ISSUED: Final = "oauth.token.issued"
TOKEN_REFRESHED: Final = "oauth.token.refreshed"
TOKEN_REVOKED: Final = "oauth.token.revoked"
REFRESH_TOKEN_REUSED: Final = "oauth.refresh_token.reuse_detected"
AUTHORIZATION_CODE_REUSED: Final = "oauth.authorization_code.reuse_detected"
DEVICE_APPROVED: Final = "oauth.device.approved"
DEVICE_DENIED: Final = "oauth.device.denied"

ALL_EVENTS: Final = (
    CLIENT_CREATED,
    CLIENT_UPDATED,
    CLIENT_SECRET_ROTATED,
    CLIENT_REVOKED,
    CLIENT_AUTH_FAILED,
    AUTHORIZATION_APPROVED,
    AUTHORIZATION_DENIED,
    TOKEN_ISSUED,
    TOKEN_REFRESHED,
    TOKEN_REVOKED,
    REFRESH_TOKEN_REUSED,
    AUTHORIZATION_CODE_REUSED,
    DEVICE_APPROVED,
    DEVICE_DENIED,
)


@dataclass(frozen=True)
class RequestInfo:
    """Who is asking, as the host's request_context describes it."""

    ip: str | None = None
    user_agent: str | None = None


async def emit(
    hook: AuditHook | None,
    event: str,
    at: datetime,
    info: RequestInfo,
    *,
    client_id: str | None = None,
    user_id: int | None = None,
    details: Mapping[str, Any] | None = None,
) -> None:
    if hook is None:
        return
    payload: dict[str, Any] = {
        "event": event,
        "at": at.isoformat(),
        "client_id": client_id,
        "user_id": user_id,
        "ip": info.ip,
        "user_agent": info.user_agent,
    }
    if details:
        payload["details"] = dict(details)
    try:
        result = hook(payload)
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("the OAuth audit hook failed on %s", event)
