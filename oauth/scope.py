"""Scope strings (RFC 6749 section 3.3): space-delimited, order-insensitive."""

from __future__ import annotations

import re
from collections.abc import Iterable

# scope-token = 1*( %x21 / %x23-5B / %x5D-7E ), RFC 6749 appendix A.4.
_SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")


def parse_scope(value: str | Iterable[str] | None) -> list[str]:
    """Split a scope string into its tokens, de-duplicated, first occurrence kept."""
    if value is None:
        return []
    parts = value.split(" ") if isinstance(value, str) else list(value)
    seen: dict[str, None] = {}
    for part in parts:
        if part:
            seen.setdefault(part, None)
    return list(seen)


def format_scope(scopes: Iterable[str]) -> str:
    """Join scope tokens with single spaces (the wire form)."""
    return " ".join(parse_scope(list(scopes)))


def includes_scopes(granted: Iterable[str] | str, requested: Iterable[str] | str) -> bool:
    """True when every requested scope is among the granted ones."""
    return set(parse_scope(requested)) <= set(parse_scope(granted))


def is_valid_scope_token(token: str) -> bool:
    return bool(_SCOPE_TOKEN.match(token))
