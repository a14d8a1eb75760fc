"""RFC 9207: the ``iss`` parameter on authorization responses, success and error."""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit, urlunsplit


def redirect_with(redirect_uri: str, params: dict[str, str | None], issuer: str) -> str:
    """``redirect_uri`` with the response parameters and ``iss`` added to its query.

    The registered URI's own query is kept (RFC 6749 3.1.2).
    """
    parts = urlsplit(redirect_uri)
    added = urlencode([(k, v) for k, v in {**params, "iss": issuer}.items() if v is not None])
    query = f"{parts.query}&{added}" if parts.query else added
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))
