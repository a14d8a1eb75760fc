"""Request bodies as a real network delivers them, on the real gateway (issue 11, item 1).

A body split across TCP segments or sent chunked is read whole, up to each
service's limit; over the limit is 413 in the owning service's shape.
"""

from __future__ import annotations

import json

import pytest

from tests.common.conftest import CMS_EMAIL, CMS_PASSWORD, LiveGateway
from tests.common.rawhttp import Reply, send

JSON = {"Content-Type": "application/json"}


def _halves(body: bytes) -> list[bytes]:
    return [body[:10], body[10:]]


def _mail_signup(n: int) -> tuple[str, bytes, dict[str, str]]:
    body = json.dumps({"email": f"split{n}@example.com", "password": "correct horse battery"})
    return "/api/auth/signup", body.encode(), JSON


def _cms_login() -> tuple[str, bytes, dict[str, str]]:
    body = json.dumps({"email": CMS_EMAIL, "password": CMS_PASSWORD})
    return "/cms/api/auth/login", body.encode(), JSON


def _oauth_client(gw: LiveGateway, name: str) -> tuple[str, bytes, dict[str, str]]:
    body = json.dumps(
        {"name": name, "redirect_uris": ["https://app.example/cb"], "allowed_scopes": ["openid"]}
    )
    return (
        "/admin/oauth/clients",
        body.encode(),
        {**JSON, "Cookie": f"svc_session={gw.mail_cookie}"},
    )


@pytest.mark.parametrize("chunk", [False, True], ids=["two-segments", "chunked"])
async def test_a_body_in_pieces_is_read_whole_by_every_service(live_gateway, chunk):
    gw = live_gateway
    n = 2 if chunk else 1

    path, body, headers = _mail_signup(n)
    reply = await send(gw.port, "POST", path, _halves(body), headers=headers, chunk=chunk)
    assert reply.status == 201, reply.body
    assert reply.json()["email"] == f"split{n}@example.com"

    path, body, headers = _cms_login()
    reply = await send(gw.port, "POST", path, _halves(body), headers=headers, chunk=chunk)
    assert reply.status == 200, reply.body
    assert reply.json()["user"]["email"] == CMS_EMAIL

    path, body, headers = _oauth_client(gw, f"Split app {n}")
    reply = await send(gw.port, "POST", path, _halves(body), headers=headers, chunk=chunk)
    assert reply.status == 201, reply.body
    assert reply.json()["name"] == f"Split app {n}"


async def test_a_large_body_in_many_segments_is_read_whole(live_gateway):
    # About 60 KB: dozens of segments on any real network.
    body = json.dumps({"email": "big@example.com", "password": "p" * 60_000}).encode()
    parts = [body[i : i + 1400] for i in range(0, len(body), 1400)]
    reply = await send(
        live_gateway.port,
        "POST",
        "/api/auth/signup",
        [*parts[:3], b"".join(parts[3:])],
        headers=JSON,
    )
    # The password is over the route's own maximum: a field error, not a broken body.
    assert reply.status == 400
    assert "password" in reply.json()["message"]


def _over(limit: int) -> list[bytes]:
    filler = b" " * (limit // 2)
    return [b'{"a": 1,', filler, filler + b"}"]


MAIL_413 = {"statusCode": 413, "name": "quota_exceeded"}


@pytest.mark.parametrize("chunk", [False, True], ids=["content-length", "chunked"])
async def test_a_body_over_the_limit_is_413_in_each_services_shape(live_gateway, chunk):
    gw = live_gateway

    def check_mail(reply: Reply) -> None:
        assert reply.status == 413
        assert {k: reply.json()[k] for k in MAIL_413} == MAIL_413

    path, _, headers = _mail_signup(99)
    check_mail(await send(gw.port, "POST", path, _over(1 << 20), headers=headers, chunk=chunk))

    path, _, headers = _cms_login()
    reply = await send(gw.port, "POST", path, _over(4 << 20), headers=headers, chunk=chunk)
    assert reply.status == 413
    assert reply.json()["code"] == "PAYLOAD_TOO_LARGE"
    assert set(reply.json()) == {"error", "code", "details"}

    path, _, headers = _oauth_client(gw, "too big")
    reply = await send(gw.port, "POST", path, _over(1 << 20), headers=headers, chunk=chunk)
    assert reply.status == 413
    assert reply.json()["error"] == "invalid_request"
    assert set(reply.json()) == {"error", "error_description"}

    form = {"Content-Type": "application/x-www-form-urlencoded"}
    reply = await send(
        gw.port,
        "POST",
        "/oauth/token",
        [b"grant_type=", b"x" * (1 << 20)],
        headers=form,
        chunk=chunk,
    )
    assert reply.status == 413
    assert reply.json()["error"] == "invalid_request"


async def test_autodiscover_reads_a_split_body_and_refuses_an_oversized_one(live_gateway):
    xml = (
        b'<?xml version="1.0"?><Autodiscover xmlns="http://schemas.microsoft.com/exchange/'
        b'autodiscover/outlook/requestschema/2006"><Request><EMailAddress>a@nowhere.example'
        b"</EMailAddress><AcceptableResponseSchema>http://schemas.microsoft.com/exchange/"
        b"autodiscover/outlook/responseschema/2006a</AcceptableResponseSchema></Request>"
        b"</Autodiscover>"
    )
    headers = {"Content-Type": "text/xml"}
    path = "/autodiscover/autodiscover.xml"
    reply = await send(live_gateway.port, "POST", path, _halves(xml), headers=headers)
    # Parsed whole: the address is understood, its domain is just not hosted here.
    assert reply.status == 404
    assert b"ErrorCode>500<" in reply.body
    reply = await send(
        live_gateway.port, "POST", path, [xml[:-20], b" " * 70_000, xml[-20:]], headers=headers
    )
    assert reply.status == 413
    assert b"ErrorCode>600<" in reply.body
