"""What several browser tests do: an account made through the API, a sign-in through the page."""

from __future__ import annotations

import json
from typing import Any

import httpx
import psycopg2

from tests.browser.conftest import Screens

PASSWORD = "correct horse battery staple"


def make_account(base_url: str, email: str, name: str = "") -> None:
    """An account made the way a script would (no browser headers: no CSRF question)."""
    response = httpx.post(
        base_url + "/api/auth/signup",
        json={"email": email, "password": PASSWORD, "name": name or None},
    )
    assert response.status_code == 201, response.text


def sign_in(tab: Screens, email: str, *, check_as: str | None = None) -> None:
    """Fill the sign-in page the browser is on and submit it."""
    page = tab.page
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    if check_as:
        tab.check(check_as)
    page.get_by_role("button", name="Sign in").click()


def insert_client(database_url: str, client_id: str, name: str, redirect_uri: str) -> None:
    """A registered public OAuth client (PKCE, no secret)."""
    with psycopg2.connect(database_url) as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO oauth.oauth_clients (client_id, name, redirect_uris, allowed_scopes)"
            " VALUES (%s, %s, %s, %s)",
            (client_id, name, json.dumps([redirect_uri]), json.dumps(["openid", "email"])),
        )
    conn.close()


def fulfil_callback(tab: Screens, origin: str) -> list[str]:
    """Answers the OAuth client's redirect URI in the browser; returns the URLs it got."""
    seen: list[str] = []
    tab.allowed.add(origin)

    def answer(route: Any) -> None:
        seen.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<title>client</title>ok")

    tab.page.route(origin + "/**", answer)
    return seen
