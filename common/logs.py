"""Logging: the request id, the JSON line format and the secret redaction net.

``configure(format)`` is called once by each entry point. ``text`` keeps the
human line (``time LEVEL logger: message``); ``json`` writes one object per
line with ``time``, ``level``, ``logger``, ``message``, ``request_id`` and the
record's structured fields (``extra={...}``), plus ``exception`` when there
is a traceback.

The request id lives in a context variable: the gateway's middleware sets it
for each request (an incoming ``X-Request-Id`` when it is sane, else a new
one), every task the request starts inherits it, the job queue stores it with
each job it enqueues and sets it again while the job runs, and the outbound
queue stores it with each message as its trace id.

No secret belongs in a log line: code must not pass one. ``Redact`` is the
safety net under that rule, installed on the handler so every logger's
records pass it: it masks what looks like a credential (bearer and basic
credentials, ``password=``-style pairs, cookies, JWTs, ``whsec_`` and other
prefixed tokens, long random strings) in the message, its arguments and the
traceback.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

REQUEST_ID_HEADER = "X-Request-Id"

_request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

# An incoming id is kept when it is short and plain: it lands in log lines,
# headers and mail trace fields, so nothing that could break one of those.
_SANE_ID = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")


def current_request_id() -> str | None:
    return _request_id.get()


def set_request_id(value: str | None) -> Any:
    """Make ``value`` the current request id; returns the token for :func:`reset_request_id`."""
    return _request_id.set(value)


def reset_request_id(token: Any) -> None:
    _request_id.reset(token)


def new_request_id() -> str:
    return uuid.uuid4().hex


def accept_request_id(incoming: str | None) -> str:
    """The client's X-Request-Id when it is sane, else a fresh one."""
    if incoming is not None and _SANE_ID.fullmatch(incoming):
        return incoming
    return new_request_id()


# --- redaction ---------------------------------------------------------------

MASK = "[redacted]"
# The one way past the net: a development instance logging the one-time link
# of the mail it cannot send (mail/outbox/service.py). Nothing else sets it.
REVEAL = "reveal_secret"

_SECRET_NAMES = (
    r"password|passwd|secret|client_secret|token|access_token|refresh_token|id_token"
    r"|api[_-]?key|apikey|authorization|cookie|set-cookie|code|code_verifier|otp|totp"
    r"|ticket|signature|webhook-signature|svc_session"
)
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Authorization header values.
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{6,}"), r"\1 " + MASK),
    # name=value, name: value, "name": "value" (JSON, forms, headers, query strings).
    (
        re.compile(
            rf"""(?ix)(["']?\b(?:{_SECRET_NAMES})\b["']?\s*[:=]\s*["']?)"""
            r"""([^\s"'&,;)}\]]{4,})"""
        ),
        r"\1" + MASK,
    ),
    # JWTs.
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), MASK),
    # Prefixed tokens: whsec_..., svc_..., re_..., svcagt_...
    # (the random part holds a digit or a capital; snake_case identifiers do not).
    (re.compile(r"\b[a-z]{2,12}_(?=[A-Za-z0-9_+/=-]*[A-Z0-9])[A-Za-z0-9_+/=-]{16,}"), MASK),
    # Long base64url randoms (token_urlsafe): mixed case and digits, 32+ long.
    (
        re.compile(
            r"(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_-]*[a-z])(?=[A-Za-z0-9_-]*[A-Z])"
            r"(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{32,}"
        ),
        MASK,
    ),
    # Base32 secrets (TOTP): upper case and digits 2-7, 16+ long.
    (
        re.compile(
            r"(?<![A-Za-z0-9])(?=[A-Z2-7]*[2-7])(?=[A-Z2-7]*[A-Z])[A-Z2-7]{16,}(?![a-z0-9])"
        ),
        MASK,
    ),
)


def redact(text: str) -> str:
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class Redact(logging.Filter):
    """Masks credentials in a record's message, arguments and traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, REVEAL, False):
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: keep what there is
            message = str(record.msg)
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        for name, value in _extra_fields(record).items():
            if isinstance(value, str):
                setattr(record, name, redact(value))
        return True


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = _request_id.get()
        return True


# --- formats -----------------------------------------------------------------

# Attributes every LogRecord has: anything else on a record came from ``extra``.
_STANDARD = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys()
    | {"message", "asctime", "request_id", "taskName", REVEAL}
)


def _extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        for name, value in _extra_fields(record).items():
            entry.setdefault(name, value)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        return json.dumps(entry, default=str, ensure_ascii=False)


TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(log_format: str = "text", level: int = logging.INFO) -> None:
    """Send every record to stderr in ``log_format``, through the redaction net."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RequestIdFilter())
    handler.addFilter(Redact())
    handler.setFormatter(
        JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    )
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    logging.captureWarnings(True)  # warnings become records: one JSON object each
