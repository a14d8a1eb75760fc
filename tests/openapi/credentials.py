"""Credentials the fuzz runs carry, made over HTTP on the running gateway."""

from __future__ import annotations

import base64
import json
import urllib.request
from http.cookies import SimpleCookie
from typing import Any

PASSWORD = "correct horse battery staple 11"


def call(
    base_url: str, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        base_url + path,
        data=data,
        method=method,
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None, response.headers
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, json.loads(raw) if raw else None, exc.headers


def mail_session(base_url: str) -> str:
    """Sign up the first account (the instance owner); its svc_session cookie header."""
    status, body, headers = call(
        base_url,
        "POST",
        "/api/auth/signup",
        {"email": "owner@example.com", "password": PASSWORD, "name": "Owner"},
    )
    assert status == 201, body
    cookie = SimpleCookie(headers["Set-Cookie"])
    return f"svc_session={cookie['svc_session'].value}"


def cms_token(base_url: str) -> str:
    status, body, _ = call(
        base_url,
        "POST",
        "/cms/api/auth/setup",
        {"email": "owner@example.com", "password": PASSWORD, "name": "Owner", "mode": "bearer"},
    )
    assert status == 201, body
    return str(body["token"])


def oauth_client_basic(base_url: str, cookie: str) -> str:
    """A confidential client registered by the instance owner, as an HTTP Basic header."""
    client = {
        "name": "fuzz",
        "redirect_uris": ["https://client.example/callback"],
        "allowed_scopes": ["openid"],
    }
    status, body, _ = call(base_url, "POST", "/admin/oauth/clients", client, {"Cookie": cookie})
    assert status == 201, body
    pair = f"{body['client_id']}:{body['client_secret']}".encode()
    return "Basic " + base64.b64encode(pair).decode()


def credentials_for(service: str, base_url: str) -> dict[str, str]:
    if service == "mail":
        return {"Cookie": mail_session(base_url)}
    if service == "content":
        return {"Authorization": f"Bearer {cms_token(base_url)}"}
    # OAuth: the consent and admin routes take the host's (mail's) session; the
    # client endpoints a confidential client's HTTP Basic credentials.
    cookie = mail_session(base_url)
    return {"Cookie": cookie, "Authorization": oauth_client_basic(base_url, cookie)}
