"""OpenAPI 3.1 documents built from the routers the services actually serve.

Nothing here lists a route. :func:`build_document` walks an application's
aiohttp router (paths, methods, path parameters), so a route cannot be served
undocumented; what the router cannot know (the JSON Schema of a body or a
query, the success shape, the error statuses beyond the common ones, the
credential) is declared next to the handler with :func:`operation`::

    @routes.post("/api/auth/login")
    @operation(body=obj({"email": string(max_length=254)}, required=["email"]))
    async def login(request): ...

The declaration is stored on the function object, so it survives the route
table and ``functools.wraps`` guards. Every error status an operation can
answer is documented with the service's error shape (:class:`Profile`):
the ones every route shares (404 and 429, 400/413 with a body, 401/403 with
a credential), plus the ones the declaration names.

:func:`publish` serves the document as JSON and as an HTML page rendered
here, server side (no CDN, no JavaScript): the same document, for people.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, TypeVar

from aiohttp import web
from aiohttp.web_urldispatcher import AbstractRoute

from common.bundles import BUNDLES, NotBuilt

Schema = dict[str, Any]
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
ATTRIBUTE = "__openapi__"

F = TypeVar("F", bound=Callable[..., Any])


# --- schema shorthands -------------------------------------------------------


def string(
    *,
    max_length: int | None = None,
    min_length: int | None = None,
    enum: Iterable[str] | None = None,
    fmt: str | None = None,
    pattern: str | None = None,
    nullable: bool = False,
    description: str | None = None,
) -> Schema:
    schema: Schema = {"type": ["string", "null"] if nullable else "string"}
    if enum is not None:
        schema["enum"] = [*enum, *([None] if nullable else [])]
    if max_length is not None:
        schema["maxLength"] = max_length
    if min_length is not None:
        schema["minLength"] = min_length
    if fmt is not None:
        schema["format"] = fmt
    if pattern is not None:
        schema["pattern"] = pattern
    if description is not None:
        schema["description"] = description
    return schema


def integer(
    *, minimum: int | None = None, maximum: int | None = None, nullable: bool = False
) -> Schema:
    schema: Schema = {"type": ["integer", "null"] if nullable else "integer"}
    if minimum is not None:
        schema["minimum"] = minimum
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def boolean(*, nullable: bool = False) -> Schema:
    return {"type": ["boolean", "null"] if nullable else "boolean"}


def array(items: Schema, *, max_items: int | None = None) -> Schema:
    schema: Schema = {"type": "array", "items": items}
    if max_items is not None:
        schema["maxItems"] = max_items
    return schema


def obj(
    properties: Mapping[str, Schema] | None = None,
    *,
    required: Iterable[str] = (),
    additional: bool | Schema = False,
) -> Schema:
    """A JSON object; unknown members are refused unless ``additional`` says otherwise."""
    schema: Schema = {"type": "object", "properties": dict(properties or {})}
    needed = list(required)
    if needed:
        schema["required"] = needed
    schema["additionalProperties"] = additional
    return schema


def whole_number(digits: int) -> Schema:
    """A positive whole-number query parameter; empty (``?page=``) reads as absent."""
    return {"type": "string", "pattern": f"^([1-9][0-9]{{0,{digits - 1}}})?$"}


# --- declarations --------------------------------------------------------------


@dataclass(frozen=True)
class Operation:
    """What the router cannot tell about one handler."""

    summary: str | None = None
    body: Schema | None = None
    body_media: str = JSON
    # None: required when the schema requires a member (an empty body reads as {}).
    body_required: bool | None = None
    query: Mapping[str, Schema] = field(default_factory=dict)
    required_query: Sequence[str] = ()
    status: int = 200
    response: Schema | None = None
    response_media: str = JSON
    errors: Sequence[int] = ()
    auth: str | None = None
    # Statuses the common ones would add but this route cannot answer.
    never: Sequence[int] = ()
    # Answers a protocol fixes outside the error shape: status -> (media type, schema).
    other: Mapping[int, tuple[str, Schema]] = field(default_factory=dict)

    def __call__(self, fn: F) -> F:
        """Used as a decorator: record these facts on the handler itself."""
        setattr(fn, ATTRIBUTE, self)
        return fn


# At a handler: @operation(body=..., auth=...). The dataclass checks the names.
operation = Operation


def declaration(handler: Any) -> Operation:
    """The handler's declaration, looking through ``functools.wraps`` layers."""
    seen = handler
    while seen is not None:
        op = getattr(seen, ATTRIBUTE, None)
        if isinstance(op, Operation):
            return op
        seen = getattr(seen, "__wrapped__", None)
    return Operation()


PAGE_ATTRIBUTE = "__openapi_page__"


def page(fn: F) -> F:
    """Mark a handler as an HTML page for people, not part of the API.

    The document describes the machine interface; pages (mail/pages/) drive
    that interface from a browser and are left out of it.
    """
    setattr(fn, PAGE_ATTRIBUTE, True)
    return fn


def is_page(handler: object) -> bool:
    """Whether a route's handler was marked with :func:`page`."""
    return bool(getattr(handler, PAGE_ATTRIBUTE, False))


# --- one service's conventions -------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """A service's error shape and the statuses every route of it shares."""

    title: str
    description: str
    error_schema: Schema
    security_schemes: Mapping[str, Schema]
    # auth name (Operation.auth) -> security requirement alternatives
    security: Mapping[str, list[dict[str, list[str]]]]
    every_route: frozenset[int] = frozenset({404, 429})
    with_body: frozenset[int] = frozenset({400, 413})
    with_query: frozenset[int] = frozenset({400})
    with_auth: frozenset[int] = frozenset({401, 403})
    # Statuses any POST, PUT, PATCH or DELETE may answer (a CSRF refusal).
    unsafe: frozenset[int] = frozenset()
    version: str = "1"


# --- building the document -------------------------------------------------------


def served_operations(app: web.Application) -> list[tuple[str, str, AbstractRoute]]:
    """(path, method, route) for every route of the app's router; GET implies HEAD."""
    out: list[tuple[str, str, AbstractRoute]] = []
    for resource in app.router.resources():
        for route in resource:
            if route.method == "HEAD" or is_page(route.handler):
                continue
            out.append((resource.canonical, route.method, route))
    return out


def _path_names(path: str) -> list[str]:
    names = []
    for part in path.split("/"):
        if part.startswith("{") and part.endswith("}"):
            names.append(part[1:-1].split(":", 1)[0])
    return names


def _error_response(status: int) -> dict[str, Any]:
    return {
        "description": HTTPStatus(status).phrase,
        "content": {JSON: {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _success(op: Operation) -> dict[str, Any]:
    response: dict[str, Any] = {"description": HTTPStatus(op.status).phrase}
    if op.status != 204 and op.response is not None:
        response["content"] = {op.response_media: {"schema": op.response}}
    return response


def _operation(
    profile: Profile, path: str, method: str, handler: Any, operation_id: str
) -> dict[str, Any]:
    op = declaration(handler)
    doc = (getattr(handler, "__doc__", None) or "").strip().split("\n")[0]
    name = getattr(handler, "__name__", operation_id)
    out: dict[str, Any] = {
        "operationId": operation_id,
        # Without a summary or docstring, the handler's name says it ("list_sessions").
        "summary": op.summary or doc or name.replace("_", " ").capitalize(),
    }
    parameters: list[dict[str, Any]] = []
    for name in _path_names(path):
        parameters.append(
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        )
    for name, schema in op.query.items():
        parameters.append(
            {"name": name, "in": "query", "required": name in op.required_query, "schema": schema}
        )
    if parameters:
        out["parameters"] = parameters
    errors = set(profile.every_route) | set(op.errors)
    if op.body is not None:
        out["requestBody"] = {
            "required": (
                bool(op.body.get("required")) if op.body_required is None else op.body_required
            ),
            "content": {op.body_media: {"schema": op.body}},
        }
        errors |= profile.with_body
    if op.query or _path_names(path):
        errors |= profile.with_query
    if op.auth is not None:
        out["security"] = profile.security[op.auth]
        errors |= profile.with_auth
    if method not in ("GET", "HEAD", "OPTIONS"):
        errors |= profile.unsafe
    errors -= set(op.never)
    # A route that only refuses (a wrong verb answered on purpose) documents that error.
    success = _error_response(op.status) if op.status >= 400 else _success(op)
    responses: dict[str, Any] = {str(op.status): success}
    for status in sorted(errors - set(op.other)):
        responses[str(status)] = _error_response(status)
    for status, (media, schema) in sorted(op.other.items()):
        responses[str(status)] = {
            "description": HTTPStatus(status).phrase,
            "content": {media: {"schema": schema}},
        }
    out["responses"] = responses
    return out


def build_document(app: web.Application, profile: Profile) -> dict[str, Any]:
    """The OpenAPI 3.1 document of every route ``app`` serves, paths as served."""
    paths: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    for path, method, route in served_operations(app):
        handler = route.handler
        base = f"{method.lower()}_{getattr(handler, '__name__', 'handler')}"
        operation_id, n = base, 1
        while operation_id in used:
            n += 1
            operation_id = f"{base}_{n}"
        used.add(operation_id)
        paths.setdefault(path, {})[method.lower()] = _operation(
            profile, path, method, handler, operation_id
        )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": profile.title,
            "version": profile.version,
            "description": profile.description,
        },
        "paths": paths,
        "components": {
            "schemas": {"Error": profile.error_schema},
            "securitySchemes": dict(profile.security_schemes),
        },
    }


# --- serving it ----------------------------------------------------------------

profile_key = web.AppKey("openapi_profile", Profile)


def publish(app: web.Application, profile: Profile, *, json_path: str, html_path: str) -> None:
    """Serve the app's own document at ``json_path`` and its reference page at
    ``html_path``, with the page's bundle (Swagger UI) under :data:`FILES_PREFIX`.

    The bundle's files are not under the API's paths (``/api/...``): they are
    a page's assets, immutable, and spend no API budget. Every service serves
    the same files; in the gateway the mail app answers the root's.
    """
    app[profile_key] = profile
    app.router.add_get(json_path, openapi_json, name=JSON_ROUTE)
    app.router.add_get(html_path, openapi_html)
    app.router.add_get(FILES_PREFIX + "{name:.+}", reference_file, name=FILES_ROUTE)


def _document(request: web.Request) -> dict[str, Any]:
    # request.app is the service's own app however the gateway mounted it,
    # and its router's paths already carry the mount prefix (/cms).
    return build_document(request.app, request.app[profile_key])


@operation(
    summary="This OpenAPI 3.1 document",
    response={"type": "object", "required": ["openapi", "paths"]},
    never=(404,),
)
async def openapi_json(request: web.Request) -> web.Response:
    return web.json_response(_document(request), headers={"Cache-Control": "no-cache"})


@operation(
    summary="This API's reference, rendered for people",
    response={"type": "string"},
    response_media="text/html",
    never=(404,),
)
async def openapi_html(request: web.Request) -> web.Response:
    return web.Response(
        text=reference_page(request, _document(request)),
        content_type="text/html",
        charset="utf-8",
        headers={"Cache-Control": "no-cache", "Content-Security-Policy": REFERENCE_CSP},
    )


@page
async def reference_file(request: web.Request) -> web.StreamResponse:
    """The reference page's bundle: only its own files (and the chunks they import)."""
    name = request.match_info["name"]
    if not name.startswith(REFERENCE_FILES):
        raise web.HTTPNotFound(text="no such file")
    return BUNDLES.respond(name)


# --- the page for people --------------------------------------------------------

JSON_ROUTE = "openapi-json"
FILES_ROUTE = "openapi-files"
FILES_PREFIX = "/_docs/"
REFERENCE_BUNDLE = "apidocs/reference"
REFERENCE_FILES = ("apidocs/", "chunks/")
# Swagger UI under the same strict policy as every other page: its scripts and
# styles from this origin only (it sets styles through the CSSOM, which CSP
# allows), its icons as data: images, "Try it out" to this origin only.
REFERENCE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none';"
    " frame-ancestors 'none'"
)


def reference_page(request: web.Request, document: Mapping[str, Any]) -> str:
    """Swagger UI over the document (frontend/src/apidocs), with the plain
    rendering inside for a browser without JavaScript or before the bundle is
    built; the plain one is also what a text browser or a crawler reads."""
    e = html.escape
    title = document["info"]["title"]
    head = ""
    spec = str(request.app.router[JSON_ROUTE].url_for())
    try:
        files = request.app.router[FILES_ROUTE]
        script = files.url_for(name=BUNDLES.file_of(REFERENCE_BUNDLE + ".js"))
        style = files.url_for(name=BUNDLES.file_of(REFERENCE_BUNDLE + ".css"))
        head = (
            f'<link rel=stylesheet href="{e(str(style))}">'
            f'<script type=module src="{e(str(script))}"></script>'
        )
    except NotBuilt:
        pass  # the plain rendering alone, until `make assets` has run
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width, initial-scale=1'>"
        "<meta name=color-scheme content='light dark'>"
        f"<title>{e(title)} · API reference</title>{head}</head>"
        "<body><a class=skip href=#main>Skip to content</a><main id=main>"
        f'<div id=swagger data-spec="{e(spec)}" hidden></div>'
        f"<div id=plain>{render_body(document)}</div></main></body></html>"
    )


def _pre(value: Any) -> str:
    return f"<pre>{html.escape(json.dumps(value, indent=2))}</pre>"


def render_body(document: Mapping[str, Any]) -> str:
    """The document as plain HTML: every operation, its parameters, bodies and answers."""
    e = html.escape
    info = document["info"]
    out = [
        f"<h1>{e(info['title'])}</h1><p>{e(info.get('description', ''))}</p>",
        "<h2>Operations</h2>",
    ]
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            out.append(f"<section id={e(op['operationId'])}>")
            out.append(f"<h3><span class=m>{e(method.upper())}</span> <code>{e(path)}</code></h3>")
            out.append(f"<p>{e(op.get('summary', ''))}</p>")
            if "security" in op:
                schemes = " or ".join(" + ".join(req) for req in op["security"])
                out.append(f"<p>Credential: {e(schemes)}</p>")
            if op.get("parameters"):
                out.append("<table><tr><th>parameter<th>in<th>required<th>schema")
                for p in op["parameters"]:
                    out.append(
                        f"<tr><td><code>{e(p['name'])}</code><td>{e(p['in'])}"
                        f"<td>{'yes' if p.get('required') else 'no'}"
                        f"<td><code>{e(json.dumps(p['schema']))}</code>"
                    )
                out.append("</table>")
            if "requestBody" in op:
                for media, content in op["requestBody"]["content"].items():
                    out.append(f"<p>Body ({e(media)}):</p>{_pre(content['schema'])}")
            out.append("<p>Responses:</p><ul>")
            for status, response in op["responses"].items():
                out.append(f"<li><b>{e(status)}</b> {e(response['description'])}")
                for content in response.get("content", {}).values():
                    schema = content["schema"]
                    if "$ref" not in schema:
                        out.append(_pre(schema))
            out.append("</ul></section>")
    components = document.get("components", {})
    out.append("<h2>Error shape</h2>")
    out.append(_pre(components.get("schemas", {}).get("Error", {})))
    if components.get("securitySchemes"):
        out.append("<h2>Credentials</h2>")
        out.append(_pre(components["securitySchemes"]))
    return "".join(out)
