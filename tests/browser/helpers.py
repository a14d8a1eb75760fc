"""What several browser tests do: an account made through the API, a sign-in through the page."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import psycopg2

from tests.browser.conftest import Screens
from tests.conftest import GatewayProcess

PASSWORD = "correct horse battery staple"


def make_account(base_url: str, email: str, name: str = "") -> None:
    """An account made the way a script would (no browser headers: no CSRF question)."""
    response = httpx.post(
        base_url + "/api/auth/signup",
        json={"email": email, "password": PASSWORD, "name": name or None},
    )
    assert response.status_code == 201, response.text


def sign_in(
    tab: Screens, email: str, *, password: str = PASSWORD, check_as: str | None = None
) -> None:
    """Fill the sign-in page the browser is on and submit it."""
    page = tab.page
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(password)
    if check_as:
        tab.check(check_as)
    page.get_by_role("button", name="Sign in").click()


def insert_address(
    cur: Any, account_id: Any, email: str, password_hash: str, name: str = ""
) -> str:
    """A domain and an address on it (the address's id), on a psycopg2 cursor."""
    local, _, domain = email.partition("@")
    cur.execute(
        "INSERT INTO mail.domains (account_id, name, created_at, updated_at)"
        " VALUES (%s, %s, now(), now()) RETURNING id",
        (account_id, domain),
    )
    domain_id = cur.fetchone()[0]
    cur.execute(
        "INSERT INTO mail.addresses (domain_id, local_part, display_name, password_hash,"
        " created_at, updated_at) VALUES (%s, %s, %s, %s, now(), now()) RETURNING id",
        (domain_id, local, name, password_hash),
    )
    return str(cur.fetchone()[0])


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


def mailed_link(gateway: GatewayProcess, kind: str, email: str, timeout: float = 10) -> str:
    """The newest link of a kind mailed to an address, read from the development log."""
    pattern = re.compile(rf"{re.escape(kind)} for {re.escape(email)}: (\S+)")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = pattern.findall(gateway.log())
        if found:
            return str(found[-1])
        time.sleep(0.1)  # the reset mail is written by a job worker, soon after the request
    raise AssertionError(f"no {kind} link for {email} in the log:\n{gateway.log()}")


def signed_in_tab(open_tab: Any, base_url: str, email: str, name: str = "") -> Screens:
    """A new tab (its own cookies) signed in as a new account made through the API."""
    make_account(base_url, email, name)
    tab: Screens = open_tab()
    tab.page.goto("/signin")
    sign_in(tab, email)
    tab.page.wait_for_url(tab.origin + "/")
    return tab


def api_session(
    base_url: str, email: str, user_agent: str, password: str = PASSWORD
) -> httpx.Client:
    """Another client signed in to the same account: its own session cookie."""
    client = httpx.Client(base_url=base_url, headers={"User-Agent": user_agent})
    response = client.post("/api/auth/login", json={"email": email, "password": password})
    assert response.status_code == 200, response.text
    return client


def go_to_section(page: Any, name: str) -> None:
    """Opens a section from the grouped navigation as a person does: its group, then its link."""
    nav = page.get_by_role("navigation", name="Sections")
    link = nav.get_by_role("link", name=name, exact=True)
    if not link.is_visible():
        # The group's disclosure button (js/nav.js); on a phone, the Menu button.
        hidden = page.get_by_role("link", name=name, exact=True, include_hidden=True)
        group = nav.locator(".group", has=hidden).locator(".group-button")
        (group if group.is_visible() else nav.get_by_role("button", name="Menu")).click()
    link.click()
