"""Issue 11's hostile inputs, sent to every operation each document lists, on the real gateway.

schemathesis draws its own examples; these are the ones issue 11 found 500s
with, sent explicitly so no run can miss them: 100,000 "[" as a JSON body,
NUL and a lone surrogate in every body field, form field, query parameter and
path parameter, and NaN / Infinity as JSON values. Every answer must be a
documented 4xx in the service's error shape, and the gateway must log no
unhandled error. (A body split across TCP segments is network-level:
tests/common/test_request_bodies.py.)
"""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import quote

import jsonschema_rs
import pytest

from tests.openapi.credentials import credentials_for
from tests.openapi.test_fuzz import DOCUMENTS, FUZZ_ENV

DEEP = b"[" * 100_000
# Raw JSON texts: NaN and Infinity are not JSON, "\ud800" is JSON no UTF-8 can carry.
JSON_VALUES = {
    "nul": b'"a\\u0000b"',
    "surrogate": b'"x\\ud800y"',
    "nan": b"NaN",
    "infinity": b"Infinity",
    "-infinity": b"-Infinity",
}
# The same as URL text: NUL, and U+D800 in the encoding a surrogate-passing encoder writes.
URL_VALUES = {"nul": "a%00b", "surrogate": quote("x\ud800y", errors="surrogatepass")}


def _json_object(names: list[str], raw: bytes) -> bytes:
    members = [b'"%s": %s' % (name.encode(), raw) for name in names or ["x"]]
    return b"{" + b", ".join(members) + b"}"


def hostile_requests(path: str, op: dict[str, Any]) -> list[tuple[str, str, bytes | None, str]]:
    """(label, target, body, content type) for every hostile input this operation takes."""
    params = op.get("parameters", [])
    in_path = [p["name"] for p in params if p["in"] == "path"]
    in_query = [p["name"] for p in params if p["in"] == "query"]
    benign_path = path
    for name in in_path:
        benign_path = benign_path.replace("{" + name + "}", "1")
    out: list[tuple[str, str, bytes | None, str]] = []
    for label, value in URL_VALUES.items():
        if in_path:
            target = path
            for name in in_path:
                target = target.replace("{" + name + "}", value)
            out.append((f"path {label}", target, None, ""))
        if in_query:
            query = "&".join(f"{name}={value}" for name in in_query)
            out.append((f"query {label}", f"{benign_path}?{query}", None, ""))
    for media, content in op.get("requestBody", {}).get("content", {}).items():
        names = list(content["schema"].get("properties", {}))
        if media == "application/json":
            out.append(("deep body", benign_path, DEEP, media))
            for label, raw in JSON_VALUES.items():
                out.append((f"body {label}", benign_path, _json_object(names, raw), media))
        elif media == "application/x-www-form-urlencoded":
            for label, value in URL_VALUES.items():
                form = "&".join(f"{name}={value}" for name in names or ["x"])
                out.append((f"form {label}", benign_path, form.encode(), media))
    return out


def send(
    port: int, method: str, target: str, body: bytes | None, headers: dict[str, str]
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, target, body=body, headers=headers)  # the target goes as is
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("service", sorted(DOCUMENTS))
def test_issue_11_inputs_get_a_documented_error_in_shape_on_every_operation(
    service: str, gateway_process: Any, database_url: str
) -> None:
    gw = gateway_process(env={"DATABASE_URL": database_url, **FUZZ_ENV})
    credential = credentials_for(service, gw.base_url)
    status, raw = send(gw.port, "GET", DOCUMENTS[service], None, {})
    assert status == 200
    document = json.loads(raw)
    error_shape = jsonschema_rs.validator_for(document["components"]["schemas"]["Error"])
    problems: list[str] = []
    sent = 0
    for path, operations in document["paths"].items():
        for method, op in operations.items():
            # Signing out would end the credential every later request relies on.
            headers = {} if "logout" in op["operationId"] else dict(credential)
            for label, target, body, media in hostile_requests(path, op):
                sent += 1
                request_headers = {**headers, **({"Content-Type": media} if media else {})}
                status, reply = send(gw.port, method.upper(), target, body, request_headers)
                where = f"{method.upper()} {target[:80]} ({label}): {status} {reply[:200]!r}"
                if not 400 <= status < 500:
                    problems.append(f"not a 4xx: {where}")
                    continue
                if str(status) not in op["responses"]:
                    problems.append(f"undocumented status: {where}")
                documented = op["responses"].get(str(status), {}).get("content", {})
                if "application/json" in documented or not documented:
                    try:
                        shape_errors = list(error_shape.iter_errors(json.loads(reply)))
                    except ValueError:
                        shape_errors = ["not JSON"]
                    if shape_errors:
                        problems.append(f"not the error shape: {where}")
    print(f"{service}: {sent} hostile requests")
    assert sent > 0
    assert not problems, "\n".join(problems)
    assert "unhandled error" not in gw.log(), gw.log()[-5000:]
