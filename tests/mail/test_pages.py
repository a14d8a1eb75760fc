"""The pages framework: headers on every page, assets, where sign-in sends you, the document.

The screens themselves are walked in a real browser (tests/browser/).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from common.runtime import Runtime
from mail.pages import assets
from mail.pages.security import safe_next
from tests.mail.factories import signed_in

PAGES = (
    "/signin",
    "/signup",
    "/signout",
    "/forgot-password",
    "/reset-password?token=x",
    "/verify-email?token=x",
)


@pytest.mark.parametrize("path", PAGES)
async def test_every_page_is_html_with_a_strict_policy(client: Any, path: str) -> None:
    response = await client.get(path)
    assert response.status == 200
    assert response.content_type == "text/html"
    csp = response.headers["Content-Security-Policy"]
    for directive in (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
        "form-action 'self'",
        "base-uri 'none'",
    ):
        assert directive in csp
    assert "unsafe-inline" not in csp
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert response.headers["Cache-Control"] == "no-store"
    html = await response.text()
    # No inline script or style, and nothing from another origin.
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    assert "<style" not in html and " style=" not in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/authorize?client_id=x&scope=openid%20email&state=a%2Bb",
        "/pair?user_code=ABCD-EFGH",
    ],
)
async def test_a_signed_out_person_is_sent_to_sign_in_and_back(client: Any, path: str) -> None:
    response = await client.get(path, allow_redirects=False)
    assert response.status == 303
    location = response.headers["Location"]
    assert location.startswith("/signin?next=")
    follow = await client.get(location)
    html = await follow.text()
    assert f'data-next="{path.replace("&", "&amp;")}"' in html


async def test_a_signed_in_person_sees_the_consent_page(client: Any, runtime: Runtime) -> None:
    account, headers = await signed_in(runtime)
    response = await client.get("/authorize?client_id=x", headers=headers)
    assert response.status == 200
    assert account.email in await response.text()
    assert response.headers["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize(
    "raw",
    [
        "https://evil.example/",
        "//evil.example/x",
        "/\\evil.example",
        "/\t/evil.example",
        "javascript:alert(1)",
        "evil.example",
        "",
        None,
    ],
)
def test_next_keeps_only_same_origin_paths(raw: str | None) -> None:
    assert safe_next(raw) == "/"


def test_next_keeps_a_path_and_its_query() -> None:
    assert safe_next("/authorize?client_id=a&state=b") == "/authorize?client_id=a&state=b"


async def test_the_sign_in_page_never_echoes_a_foreign_next(client: Any) -> None:
    html = await (await client.get("/signin?next=//evil.example/")).text()
    assert 'data-next="/"' in html
    assert "evil.example" not in html


async def test_assets_are_versioned_and_cached_for_good(client: Any) -> None:
    html = await (await client.get("/signin")).text()
    url = assets.url("app.css")
    assert url in html
    response = await client.get(url)
    assert response.status == 200
    assert response.content_type == "text/css"
    assert "immutable" in response.headers["Cache-Control"]
    etag = response.headers["ETag"]
    again = await client.get("/assets/app.css", headers={"If-None-Match": etag})
    assert again.status == 304
    assert again.headers["Cache-Control"] == "no-cache"
    stale = await client.get("/assets/000000000000/app.css")
    assert stale.status == 404
    module = await client.get(assets.url("js/signin.js"))
    assert module.content_type == "text/javascript"


async def test_pages_stay_out_of_the_api_document(client: Any) -> None:
    document = await (await client.get("/api/openapi.json")).json()
    for path in ("/", "/signin", "/authorize", "/pair", "/assets/{name}"):
        assert path not in document["paths"]


async def test_the_oauth_metadata_advertises_these_pages(client: Any, runtime: Runtime) -> None:
    document = await (await client.get("/.well-known/oauth-authorization-server/oauth")).json()
    endpoint = document["authorization_endpoint"]
    assert endpoint == runtime.settings.public_url + "/authorize"
    _, headers = await signed_in(runtime)
    # The consent page, and /pair, the device flow's verification URI (tests/browser/ follows one).
    for path in ("/authorize?client_id=x", "/pair"):
        response = await client.get(path, headers=headers)
        assert response.status == 200, path
        assert response.content_type == "text/html"


NAVIGATE = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Accept": "text/html"}


async def test_a_form_the_browser_posts_itself_gets_a_page_and_changes_nothing(
    client: Any, runtime: Runtime
) -> None:
    """The sign-in form when its script did not load: not `send the body as application/json`."""
    account, _ = await signed_in(runtime)
    form = {"email": account.email, "password": "correct horse battery staple"}
    origin = str(client.make_url("")).rstrip("/")
    response = await client.post(
        "/api/auth/login",
        data=form,
        headers={**NAVIGATE, "Origin": origin, "Referer": origin + "/signin?next=%2Ffilters"},
    )
    assert response.status == 400
    assert response.content_type == "text/html"
    html = await response.text()
    assert "This page did not finish loading" in html and "Nothing was changed" in html
    assert 'href="/signin?next=%2Ffilters"' in html
    assert "svc_session" not in response.cookies
    # Browsers without Fetch Metadata: a form's body and a page's Accept say the same.
    old = await client.post("/api/mail/login", data=form, headers={"Accept": "text/html"})
    assert old.status == 400 and old.content_type == "text/html"
    # A page of another site is not a way back.
    away = await client.post(
        "/api/auth/logout", headers={**NAVIGATE, "Referer": "https://elsewhere.example/x"}
    )
    assert 'href="/"' in await away.text()


async def test_scripts_and_api_clients_still_get_json(client: Any) -> None:
    # fetch() from a page: Sec-Fetch-Mode cors or same-origin.
    scripted = await client.post(
        "/api/auth/login", data={"email": "a@b.example"}, headers={"Sec-Fetch-Mode": "same-origin"}
    )
    assert scripted.content_type == "application/json"
    # A script sending a form without Fetch Metadata (curl) asked for no HTML.
    curl = await client.post("/api/auth/login", data={"email": "a@b.example"})
    assert curl.content_type == "application/json"
    # A GET navigation to the API (the docs, a download) is the API's.
    docs = await client.get("/api/openapi.json", headers=NAVIGATE)
    assert docs.content_type == "application/json"
