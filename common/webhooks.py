"""Signing and verifying webhook deliveries: the Standard Webhooks scheme.

https://www.standardwebhooks.com: a delivery carries ``webhook-id`` (the
message id, the same on every retry so receivers can deduplicate),
``webhook-timestamp`` (Unix seconds of this attempt) and ``webhook-signature``
(``v1,<base64 HMAC-SHA256>`` of ``"{id}.{timestamp}.{body}"`` keyed by the
base64-decoded part of the ``whsec_`` secret; several space-separated
signatures are allowed while a secret rotates). Any service that posts to
another system (the CMS's webhooks, mail's) signs with this module.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass

from common.crypto import constant_time_equals
from common.outbound import OutboundClient

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
# Receivers refuse timestamps further than this from their clock (replay guard).
TOLERANCE_SECONDS = 5 * 60


def generate_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _key(secret: str) -> bytes:
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError("a webhook secret starts with whsec_")
    return base64.b64decode(secret[len(SECRET_PREFIX) :])


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def signed_headers(secret: str, message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The three headers of one delivery attempt, plus its JSON content type."""
    return {
        "Content-Type": "application/json",
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret, message_id, timestamp, body),
    }


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    now: int,
    *,
    tolerance: int = TOLERANCE_SECONDS,
) -> bool:
    """True when one of the ``v1`` signatures matches and the timestamp is fresh."""
    message_id = headers.get("webhook-id")
    stamp = headers.get("webhook-timestamp")
    given = headers.get("webhook-signature")
    if not message_id or not stamp or not given or not stamp.isdigit():
        return False
    timestamp = int(stamp)
    if abs(now - timestamp) > tolerance:
        return False
    expected = signature(secret, message_id, timestamp, body)
    return any(
        constant_time_equals(candidate, expected)
        for candidate in given.split()
        if candidate.startswith("v1,")
    )


@dataclass(frozen=True)
class Outcome:
    """One signed POST as the sender records it."""

    status: int | None
    ok: bool
    error: str
    duration_ms: int
    # The start of the receiver's answer (OutboundClient reads at most MAX_ANSWER_BYTES).
    response: str


async def send(
    client: OutboundClient,
    url: str,
    secret: str,
    message_id: str,
    body: bytes,
    timestamp: int,
    *,
    user_agent: str,
    excerpt_chars: int = 1000,
) -> Outcome:
    """Sign ``body`` and POST it; anything but a 2xx (a redirect too) is a failure."""
    headers = signed_headers(secret, message_id, timestamp, body)
    headers["User-Agent"] = user_agent
    started = time.monotonic()
    status: int | None = None
    error = ""
    response = ""
    try:
        answer = await client.post(url, body, headers)
        status = answer.status
        response = answer.body.decode("utf-8", "replace")[:excerpt_chars]
        if not 200 <= status < 300:
            error = f"the receiver answered {status}" + (
                " (redirects are not followed)" if 300 <= status < 400 else ""
            )
    except Exception as exc:  # refused target, DNS, connect, timeout: all recorded
        error = f"{type(exc).__name__}: {exc}"[:2000]
    duration = int((time.monotonic() - started) * 1000)
    return Outcome(status, not error, error, duration, response)
