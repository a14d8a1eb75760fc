"""The neutral types every provider module speaks: connection, events, errors, secret scrubbing."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

KINDS = ("openai", "anthropic", "ollama", "ollama-cloud")
# The kinds whose address an admin types (ollama-cloud's is fixed).
URL_KINDS = ("openai", "anthropic", "ollama")
Kind = Literal["openai", "anthropic", "ollama", "ollama-cloud"]

ErrorKind = Literal[
    "auth", "not_found", "rate_limited", "unreachable", "bad_request", "upstream", "refused"
]
# Where each kind answers when the admin gave no address (ollama-cloud: ollama_chat.CLOUD_URL).
DEFAULT_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "ollama": "http://127.0.0.1:11434",
}
# How long one provider call may take before the person hears it failed.
TIMEOUT_SECONDS = 60.0
CONNECT_SECONDS = 10.0


@dataclass(frozen=True)
class Connection:
    """What one call needs: the kind, the model, where, and the opened credential."""

    kind: str
    model: str
    base_url: str
    credential: str | None = field(default=None, repr=False)
    # WEBHOOK_ALLOW_PRIVATE: hosted kinds may reach private networks (addresses.py).
    allow_private: bool = False


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    # The raw argument text when it was not a JSON object (the model is told).
    malformed: str | None = None


@dataclass(frozen=True)
class Usage:
    tokens_in: int
    tokens_out: int


Event = TextDelta | ToolCall | Usage


class ProviderError(Exception):
    """A provider call failed; ``kind`` says how, ``message`` in the provider's words."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after


# Tokens of this product's credential kinds (agent keys, delivery keys, webhook
# secrets): whoever typed or returned one, it is withheld from every model.
_SECRET_TOKEN = re.compile(r"\b(?:svcagt_|svc_|whsec_)[A-Za-z0-9_\-+/=]{8,}")
WITHHELD = "[secret withheld]"


def redact(text: str) -> str:
    return _SECRET_TOKEN.sub(WITHHELD, text)


def scrub(value: Any, credential: str | None) -> Any:
    """``value`` (a message, its text, a tool call's arguments) with every secret withheld."""
    if isinstance(value, str):
        text = redact(value)
        return text.replace(credential, WITHHELD) if credential else text
    if isinstance(value, dict):
        return {k: scrub(v, credential) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, credential) for v in value]
    return value


def parse_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """A tool call's JSON argument text as an object, or ({}, the text) when it is not one."""
    import json

    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError:
        return {}, raw
    return (value, None) if isinstance(value, dict) else ({}, raw)


def retry_after(headers: Any) -> int | None:
    value = headers.get("retry-after") if headers is not None else None
    try:
        return max(1, int(float(value))) if value else None
    except ValueError:
        return None


def sdk_error(exc: Exception, status_error: type, connection_error: type) -> ProviderError:
    """An exception of the openai or anthropic SDK as a ProviderError.

    Both SDKs are generated the same way: a status error carries ``message``,
    ``status_code`` and ``response``; a connection error carries nothing more."""
    if isinstance(exc, status_error):
        status: int = exc.status_code  # type: ignore[attr-defined]
        return ProviderError(
            status_kind(status),
            exc.message or f"the provider answered {status}",  # type: ignore[attr-defined]
            status=status,
            retry_after=retry_after(exc.response.headers),  # type: ignore[attr-defined]
        )
    if isinstance(exc, connection_error):
        return ProviderError("unreachable", "the provider could not be reached")
    return ProviderError("upstream", str(exc) or type(exc).__name__)


def status_kind(status: int) -> ErrorKind:
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if status == 429:
        return "rate_limited"
    if 400 <= status < 500:
        return "bad_request"
    return "upstream"
