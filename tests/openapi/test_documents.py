"""The OpenAPI documents: every route served is documented, and nothing else is.

The document is built from the router (common/openapi.py); these tests hold
it against the route tables each service declares (mail.routes.ROUTE_TABLES,
content.service.ROUTE_TABLES, oauth.routes.ROUTES), against the live router
(every documented operation reaches a handler, not the router's 404 or 405),
and against the error conventions (every error answer in the owner's shape).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from content.service import ROUTE_TABLES as CONTENT_TABLES
from mail.accounts import routes as accounts_routes
from mail.addresses import routes as addresses_routes
from mail.auth import routes as auth_routes
from mail.domains import routes as domains_routes
from mail.filters import routes as filters_routes
from mail.routes import ROUTE_TABLES as MAIL_TABLES
from mta.jmap.service import ROUTES as JMAP_ROUTES
from oauth import rfc8414
from oauth.app import DEFAULT_ADMIN_BASE_PATH, DEFAULT_BASE_PATH
from oauth.routes import ROUTES as OAUTH_ROUTES

DOCUMENTS = {
    "mail": "/api/openapi.json",
    "content": "/cms/api/openapi.json",
    "oauth": "/oauth/openapi.json",
    "jmap": "/jmap/openapi.json",
}
# The mail route modules that read JSON bodies through mail.web.body.read_body.
ROUTE_MODULES = (accounts_routes, addresses_routes, auth_routes, domains_routes, filters_routes)
PAGES = {
    "mail": "/api/docs",
    "content": "/cms/api/docs",
    "oauth": "/oauth/docs",
    "jmap": "/jmap/docs",
}
# Where each service's app sits in the gateway: its reference page's files follow it.
PREFIXES = {"mail": "", "content": "/cms", "oauth": "", "jmap": ""}
ERROR_REF = {"$ref": "#/components/schemas/Error"}
SHAPES = {
    "mail": ["statusCode", "name", "message"],
    "content": ["error", "code", "details"],
    "oauth": ["error", "error_description"],
    "jmap": ["type", "status", "detail"],
}


def declared(service: str) -> set[tuple[str, str]]:
    """(METHOD, path) from the tables the service mounts, as the gateway serves them."""
    if service == "mail":
        routes = {(r.method, r.path) for table in MAIL_TABLES for r in table}
        return routes | {("GET", "/api/openapi.json"), ("GET", "/api/docs")}
    if service == "content":
        routes = {(r.method, "/cms" + r.path) for table in CONTENT_TABLES for r in table}
        return routes | {("GET", "/cms/api/openapi.json"), ("GET", "/cms/api/docs")}
    if service == "jmap":
        return {(r.method, r.path) for r in JMAP_ROUTES} | {
            ("GET", "/jmap/openapi.json"),
            ("GET", "/jmap/docs"),
        }
    out = {("GET", "/oauth/openapi.json"), ("GET", "/oauth/docs")}
    for route in OAUTH_ROUTES:
        if route.mount == "well_known":
            out |= {(route.method, p) for p in rfc8414.well_known_paths(DEFAULT_BASE_PATH)}
        else:
            base = DEFAULT_ADMIN_BASE_PATH if route.mount == "admin" else DEFAULT_BASE_PATH
            out.add((route.method, base + route.path))
    return out


def documented(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
    }


def _plain(path: str) -> str:
    # The tables spell a regex parameter ({tail:.*}); the document names it ({tail}).
    return "/".join(
        p.split(":", 1)[0] + "}" if p.startswith("{") and ":" in p else p for p in path.split("/")
    )


async def fetch(client: Any, path: str) -> dict[str, Any]:
    response = await client.get(path)
    assert response.status == 200, await response.text()
    assert response.content_type == "application/json"
    return await response.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("service", sorted(DOCUMENTS))
async def test_every_served_route_is_documented_and_nothing_else(
    gateway_client: Any, service: str
) -> None:
    document = await fetch(gateway_client, DOCUMENTS[service])
    assert document["openapi"] == "3.1.0"
    tables = {(method, _plain(path)) for method, path in declared(service)}
    assert documented(document) == tables


@pytest.mark.parametrize("service", sorted(DOCUMENTS))
async def test_every_documented_operation_reaches_a_handler(
    gateway_client: Any, service: str
) -> None:
    document = await fetch(gateway_client, DOCUMENTS[service])
    for path, operations in document["paths"].items():
        concrete = "/".join("x" if p.startswith("{") else p for p in path.split("/"))
        for method in operations:
            response = await gateway_client.request(method.upper(), concrete)
            body = await response.text()
            # The router's own answers: a 405, or a 404 "no route for ..." (common/web.py).
            assert response.status != 405, (method, path, body)
            assert "no route for" not in body, (method, path, body)


@pytest.mark.parametrize("service", sorted(DOCUMENTS))
async def test_every_error_answer_is_documented_in_the_service_shape(
    gateway_client: Any, service: str
) -> None:
    document = await fetch(gateway_client, DOCUMENTS[service])
    shape = document["components"]["schemas"]["Error"]
    assert shape["required"] == SHAPES[service]
    for path, operations in document["paths"].items():
        for method, op in operations.items():
            responses = op["responses"]
            errors = {int(s) for s in responses if int(s) >= 400}
            if "security" in op:
                assert 401 in errors, (method, path)
            if "requestBody" in op:
                assert {400, 413} <= errors, (method, path)
            if not path.endswith(("openapi.json", "/docs")) and "well-known" not in path:
                assert 404 in errors, (method, path)
            for status in errors:
                content = responses[str(status)].get("content", {})
                if "application/json" in content:
                    assert content["application/json"]["schema"] == ERROR_REF, (method, path)


async def test_mail_documents_its_rate_limit_and_csrf_refusals(gateway_client: Any) -> None:
    document = await fetch(gateway_client, DOCUMENTS["mail"])
    for path, operations in document["paths"].items():
        for method, op in operations.items():
            assert "429" in op["responses"], (method, path)
            if method in ("post", "patch", "delete"):
                assert "403" in op["responses"], (method, path)


async def test_body_schemas_say_what_the_code_enforces(gateway_client: Any) -> None:
    mail = await fetch(gateway_client, DOCUMENTS["mail"])
    login = mail["paths"]["/api/auth/login"]["post"]["requestBody"]
    schema = login["content"]["application/json"]["schema"]
    assert login["required"] is True
    assert schema["required"] == ["email", "password"]
    assert schema["properties"]["email"]["maxLength"] == 254
    assert schema["additionalProperties"] is False  # read_body(allowed=...) refuses others
    content = await fetch(gateway_client, DOCUMENTS["content"])
    entries = content["paths"]["/cms/api/entries"]["get"]["parameters"]
    status = next(p for p in entries if p["name"] == "status")
    assert status["schema"]["enum"] == ["draft", "published", "unpublished", "scheduled", ""]
    oauth = await fetch(gateway_client, DOCUMENTS["oauth"])
    token = oauth["paths"]["/oauth/token"]["post"]["requestBody"]["content"]
    assert list(token) == ["application/x-www-form-urlencoded"]


@pytest.mark.parametrize("service", sorted(PAGES))
async def test_the_docs_page_renders_the_document_for_people(
    gateway_client: Any, service: str
) -> None:
    document = await fetch(gateway_client, DOCUMENTS[service])
    response = await gateway_client.get(PAGES[service])
    assert response.status == 200
    assert response.content_type == "text/html"
    page = await response.text()
    # Readable without JavaScript: every operation rendered on the server.
    for path in document["paths"]:
        assert f"<code>{path}</code>" in page
    # Swagger UI from this origin only, under a policy with nothing inline.
    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self';" in policy and "unsafe" not in policy
    scripts = re.findall(r"<script([^>]*)>", page)
    assert len(scripts) == 1 and "type=module" in scripts[0]
    src = re.search(r'src="([^"]+)"', scripts[0])
    assert src is not None and src.group(1).startswith(PREFIXES[service] + "/_docs/apidocs/")
    bundle = await gateway_client.get(src.group(1))
    assert bundle.status == 200
    assert "immutable" in bundle.headers["Cache-Control"]
    # The files route serves the page's bundle and nothing else of the build.
    other = await gateway_client.get(PREFIXES[service] + "/_docs/cms/admin.css")
    assert other.status == 404


@pytest.mark.parametrize(
    ("service", "path", "known"),
    [
        ("mail", "/api/openapi.json", "/api/auth/login"),
        ("content", "/api/openapi.json", "/api/entries"),
        ("oauth", "/openapi.json", "/token"),
    ],
)
async def test_only_mode_serves_the_document_at_the_root(
    service_client: Any, service: str, path: str, known: str
) -> None:
    client = await service_client(service)
    document = await fetch(client, path)
    assert known in document["paths"]
    assert path in document["paths"]


async def test_mail_documents_exactly_the_body_members_each_route_reads(
    gateway_client: Any, clock: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each documented body lists exactly the members read_body(allowed=...) takes."""
    seen: dict[tuple[str, str], set[str]] = {}
    for module in ROUTE_MODULES:
        original = module.read_body

        async def recording(request: Any, *, allowed: Any = None, _read: Any = original) -> Any:
            route = request.match_info.route
            seen[(route.method, route.resource.canonical)] = set(allowed or ())
            return await _read(request, allowed=allowed)

        monkeypatch.setattr(module, "read_body", recording)
    signup = {"email": "owner@example.com", "password": "correct horse battery", "name": "O"}
    response = await gateway_client.post("/api/auth/signup", json=signup)
    assert response.status == 201
    # By header: the test client's cookie jar keeps no cookie set by an IP address.
    cookie = {"Cookie": f"svc_session={response.cookies['svc_session'].value}"}
    document = await fetch(gateway_client, DOCUMENTS["mail"])
    documented_bodies: dict[tuple[str, str], set[str]] = {}
    for path, operations in document["paths"].items():
        concrete = "/".join("x" if p.startswith("{") else p for p in path.split("/"))
        for method, op in operations.items():
            if "logout" in op["operationId"]:
                continue  # would end the session the other requests carry
            content = op.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                schema = content["application/json"]["schema"]
                if schema.get("type") == "array":  # the sending API's batch: an array of emails
                    schema = schema["items"]
                assert schema["additionalProperties"] is False, (method, path)
                documented_bodies[(method.upper(), path)] = set(schema["properties"])
            clock.advance(seconds=1)  # a fresh rate-limit window for every request
            await gateway_client.request(method.upper(), concrete, json={}, headers=cookie)
    # Every route that read a body documents one, with the same members.
    assert len(seen) >= 25
    for key, allowed in seen.items():
        assert documented_bodies.get(key) == allowed, key
