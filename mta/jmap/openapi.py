"""The JMAP routes' OpenAPI profile: problem details, Basic or Bearer.

JMAP's own description of itself is the session resource (RFC 8620 2); this
document only says which HTTP routes exist, what they take and answer, for
the same checks every service's routes get (tests/openapi).
"""

from __future__ import annotations

from common.openapi import Profile, obj, string

ERROR = obj(
    {
        "type": string(description="urn:ietf:params:jmap:error:... or about:blank"),
        "status": {"type": "integer"},
        "detail": string(),
        "title": string(),
        "limit": string(description="the limit a limit error names"),
    },
    required=["type", "status", "detail"],
)

PROFILE = Profile(
    title="JMAP",
    description=(
        "JMAP (RFC 8620 core, RFC 8621 mail) for mail clients; see docs/mail.md, 'JMAP'. "
        "Authenticate with HTTP Basic (an address and its password: that address) or a "
        "Bearer access token of this server's OAuth server with the mail scope (every "
        "address of the panel account). Errors are RFC 7807 problem details."
    ),
    error_schema=ERROR,
    security_schemes={
        "basic": {"type": "http", "scheme": "basic"},
        "bearer": {"type": "http", "scheme": "bearer"},
    },
    security={"jmap": [{"basic": []}, {"bearer": []}]},
    with_body=frozenset({400, 413}),
)

OPENAPI_PATH = "/jmap/openapi.json"
DOCS_PATH = "/jmap/docs"
