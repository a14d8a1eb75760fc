"""CSRF on the CMS's cookie sessions: the shared predicate (common/csrf.py), issue 11 item 9."""

from __future__ import annotations

import pytest

from tests.content.factories import PASSWORD


async def _cookie_login(cms, person, role="editor"):
    someone = await person(role)
    resp = await cms.post(
        "/api/auth/login", json={"email": someone.email, "password": PASSWORD, "mode": "cookie"}
    )
    assert resp.status == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Referer": "https://evil.example/page"},  # no Origin: the Referer speaks for it
        {"Referer": "https://localhost:4300/admin"},  # PUBLIC_URL's host over another scheme
        {"Origin": "https://localhost:4300"},
        {"Origin": "http://localhost:4301"},
        {"Origin": "null"},
    ],
)
async def test_a_cookie_write_from_another_origin_is_refused(cms, person, headers):
    await _cookie_login(cms, person)
    resp = await cms.post("/api/auth/logout", headers=headers)
    assert resp.status == 403
    assert (await resp.json())["code"] == "CSRF_REJECTED"
    assert (await cms.get("/api/auth/me")).status == 200  # still signed in


@pytest.mark.parametrize(
    "headers",
    [{"Origin": "http://localhost:4300"}, {"Referer": "http://localhost:4300/admin/entries"}],
)
async def test_a_cookie_write_from_our_origin_passes(cms, person, headers):
    await _cookie_login(cms, person)
    assert (await cms.post("/api/auth/logout", headers=headers)).status == 204


async def test_an_authorization_header_that_is_no_credential_does_not_ride_the_cookie(cms, person):
    await _cookie_login(cms, person)
    resp = await cms.post(
        "/api/auth/logout",
        headers={"Authorization": "Basic Zm9vOmJhcg==", "Origin": "https://evil.example"},
    )
    assert resp.status == 401
    assert (await cms.get("/api/auth/me")).status == 200


async def test_a_json_body_sent_as_text_plain_is_not_parsed(cms, person):
    await _cookie_login(cms, person, "owner")
    resp = await cms.post(
        "/api/types",
        data='{"name": "post", "label": "Post", "fields": []}',
        headers={"Content-Type": "text/plain", "Origin": "http://localhost:4300"},
    )
    assert resp.status == 415
    assert (await resp.json())["code"] == "UNSUPPORTED_MEDIA_TYPE"
