"""Redirect URIs: exact matching (spec rule 1) and which URIs may be registered.

Registrable, and nothing else (OAuth 2.1 section 2.3.1, RFC 8252 sections 7.1
and 7.3):

- ``https`` with a host;
- ``http`` to a loopback host only: ``127.0.0.1``, ``[::1]`` and ``localhost``
  (RFC 8252 8.3 calls the name NOT RECOMMENDED rather than forbidden; Hydra's
  fosite accepts it too, and browsers now pin it to loopback);
- a native app's private-use scheme in reverse-domain form
  (``com.example.app:/callback``): the scheme must contain a period, which no
  scheme a browser executes or reads locally (``javascript``, ``data``,
  ``file``, ``vbscript``, ``blob``...) does.

Always absolute, without fragment (RFC 6749 3.1.2), userinfo, whitespace or
control characters. The same check runs again at authorization time, so a URI
stored before these rules is never redirected to.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
# RFC 3986 3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def is_allowed_redirect(registered: Iterable[str], redirect_uri: str) -> bool:
    """Exact string equality with one of the registered URIs; no prefix matching."""
    return any(candidate == redirect_uri for candidate in registered)


def redirect_uri_problem(uri: object) -> str | None:
    """Why ``uri`` cannot be a redirect URI, or None when it can."""
    if not isinstance(uri, str) or not uri:
        return "must be a non-empty string"
    if any(ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F for ch in uri):
        return f"{uri!r} must not contain whitespace or control characters"
    scheme, colon, _ = uri.partition(":")
    if not colon or not _SCHEME.fullmatch(scheme):
        return f"{uri!r} is not an absolute URI"
    try:
        parts = urlsplit(uri)
        _ = parts.port  # raises ValueError on a malformed port
    except ValueError:
        return f"{uri!r} is not a URI"
    if "#" in uri:
        return f"{uri!r} must not contain a fragment"
    if "@" in parts.netloc:
        return f"{uri!r} must not contain userinfo"
    scheme = parts.scheme  # lower-cased by urlsplit
    if scheme in ("http", "https"):
        if not parts.hostname:
            return f"{uri!r} has no host"
        if scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
            return f"{uri!r}: plain http is allowed only for loopback hosts; use https"
        return None
    if "." not in scheme:
        return (
            f"{uri!r}: scheme {scheme!r} is not allowed; use https, loopback http or a"
            " private-use scheme in reverse-domain form (com.example.app:/callback)"
        )
    return None
