"""Redirect URIs: exact matching (spec rule 1) and registration checks."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


def is_allowed_redirect(registered: Iterable[str], redirect_uri: str) -> bool:
    """Exact string equality with one of the registered URIs; no prefix matching."""
    return any(candidate == redirect_uri for candidate in registered)


def redirect_uri_problem(uri: object) -> str | None:
    """Why ``uri`` cannot be registered, or None when it can.

    Absolute, no fragment (RFC 6749 3.1.2); plain http only for loopback hosts,
    as OAuth 2.1 section 2.3.1 and RFC 8252 allow for native apps; private-use
    schemes (``com.example.app:/cb``) are accepted.
    """
    if not isinstance(uri, str) or not uri or uri != uri.strip():
        return "redirect_uris must be non-empty strings"
    try:
        parts = urlsplit(uri)
    except ValueError:
        return f"{uri!r} is not a URI"
    if not parts.scheme:
        return f"{uri!r} is not an absolute URI"
    if "#" in uri:
        return f"{uri!r} must not contain a fragment"
    if parts.scheme in ("http", "https") and not parts.hostname:
        return f"{uri!r} has no host"
    if parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
        return f"{uri!r}: plain http is allowed only for loopback hosts; use https"
    if any(ch.isspace() for ch in uri):
        return f"{uri!r} must not contain whitespace"
    return None
