"""schemathesis hooks for the fuzz runs of tests/openapi/test_fuzz.py.

Loaded by the schemathesis CLI through SCHEMATHESIS_HOOKS. Two additions to
its own checks:

- ``error_shape``: every 4xx/5xx answer, documented or not (a 405 to a verb
  the document does not list), is the service's error shape, the document's
  ``components.schemas.Error``.
- the credential: OPENAPI_FUZZ_HEADERS (a JSON object of headers) is set on
  every request, except on sign-out operations, which would end the session
  every later request relies on.
"""

from __future__ import annotations

import json
import os
from typing import Any

import jsonschema_rs
import schemathesis

HEADERS: dict[str, str] = json.loads(os.environ.get("OPENAPI_FUZZ_HEADERS", "{}"))
# Operations that end the credential the run shares.
SIGN_OUT = ("logout",)


@schemathesis.auth()
class FixedCredential:
    def get(self, case: Any, ctx: Any) -> dict[str, str]:
        return HEADERS

    def set(self, case: Any, data: dict[str, str], ctx: Any) -> None:
        operation_id = case.operation.definition.raw.get("operationId", "")
        if any(word in operation_id for word in SIGN_OUT):
            return
        case.headers = {**(case.headers or {}), **data}


_validators: dict[int, Any] = {}


def _error_validator(case: Any) -> Any:
    raw = case.operation.schema.raw_schema
    key = id(raw)
    if key not in _validators:
        _validators[key] = jsonschema_rs.validator_for(raw["components"]["schemas"]["Error"])
    return _validators[key]


@schemathesis.check
def error_shape(ctx: Any, response: Any, case: Any) -> None:
    if response.status_code < 400 or case.method.upper() == "HEAD":
        return
    documented = case.operation.definition.raw.get("responses", {}).get(str(response.status_code))
    if documented is not None and "#/components/schemas/Error" not in json.dumps(documented):
        return  # a protocol's own error (Autodiscover XML); its schema is checked as documented
    try:
        body = json.loads(response.content)
    except ValueError:
        raise AssertionError(
            f"{response.status_code} answer is not JSON: {response.content[:200]!r}"
        ) from None
    if response.status_code == 405 and not any(k.lower() == "allow" for k in response.headers):
        raise AssertionError("405 answer without an Allow header")
    errors = [str(e) for e in _error_validator(case).iter_errors(body)]
    if errors:
        raise AssertionError(
            f"{response.status_code} answer is not the service's error shape: "
            f"{'; '.join(errors)}: {body!r}"
        )
