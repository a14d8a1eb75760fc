"""The conventions every mail route uses: errors, lists, ownership, routing."""

from __future__ import annotations

from typing import Any

import psycopg2.errors
import pytest
from aiohttp import web

from common.web import error_middleware, json_response
from mail import errors
from mail.web.lists import Sorts, list_envelope, parse_list_params
from tests.mail.factories import make_session, signed_in


async def test_unknown_route_and_wrong_verb_use_the_mail_shape(client):
    resp = await client.get("/api/does-not-exist")
    assert resp.status == 404
    assert await resp.json() == {
        "statusCode": 404,
        "name": "not_found",
        "message": "no route for GET /api/does-not-exist",
    }
    resp = await client.put("/api/auth/me")
    assert resp.status == 405
    body = await resp.json()
    assert body["name"] == "method_not_allowed"
    assert body["statusCode"] == 405


async def test_unauthenticated_panel_route_is_401(client):
    resp = await client.get("/api/auth/me")
    assert resp.status == 401
    assert (await resp.json())["name"] == "unauthorized"


async def test_malformed_json_is_a_validation_error(client, runtime):
    _, headers = await signed_in(runtime)
    resp = await client.patch(
        "/api/account", data=b"{not json", headers={**headers, "Content-Type": "application/json"}
    )
    assert resp.status == 400
    assert (await resp.json())["name"] == "validation_error"


async def test_missing_field_is_422_and_unknown_field_is_400(client):
    resp = await client.post("/api/auth/login", json={"email": "a@example.com"})
    assert resp.status == 422
    assert await resp.json() == {
        "statusCode": 422,
        "name": "missing_required_field",
        "message": "password is required",
    }
    resp = await client.post("/api/auth/login", json={"email": "a@b.c", "password": "x", "pw": 1})
    assert resp.status == 400
    assert (await resp.json())["name"] == "validation_error"


def _mini_app(*routes: web.RouteDef) -> web.Application:
    app = web.Application(middlewares=[error_middleware(errors.render)])
    app.add_routes(routes)
    return app


async def test_database_violations_are_translated_never_500(aiohttp_client):
    async def unique(request: web.Request) -> web.Response:
        raise psycopg2.errors.UniqueViolation("duplicate key")

    async def check(request: web.Request) -> web.Response:
        raise psycopg2.errors.CheckViolation("check")

    client = await aiohttp_client(_mini_app(web.get("/u", unique), web.get("/c", check)))
    resp = await client.get("/u")
    assert resp.status == 409
    assert (await resp.json())["name"] == "conflict"
    resp = await client.get("/c")
    assert resp.status == 400
    assert (await resp.json())["name"] == "validation_error"


async def test_internal_errors_do_not_leak(aiohttp_client):
    async def boom(request: web.Request) -> web.Response:
        raise RuntimeError("secret detail")

    client = await aiohttp_client(_mini_app(web.get("/boom", boom)))
    resp = await client.get("/boom")
    assert resp.status == 500
    assert await resp.json() == {
        "statusCode": 500,
        "name": "application_error",
        "message": "internal error",
    }


async def test_literal_segments_win_over_dynamic_ones(aiohttp_client):
    """The dynamic routes are registered FIRST: the literal ones still win."""

    async def by_id(request: web.Request) -> web.Response:
        return json_response({"route": "item", "id": request.match_info["filter_id"]})

    async def validate(request: web.Request) -> web.Response:
        return json_response({"route": "validate"})

    async def batch(request: web.Request) -> web.Response:
        return json_response({"route": "batch"})

    async def email_by_id(request: web.Request) -> web.Response:
        return json_response({"route": "email"})

    async def domain_addresses(request: web.Request) -> web.Response:
        return json_response({"route": "addresses", "domain": request.match_info["domain_id"]})

    async def domain(request: web.Request) -> web.Response:
        return json_response({"route": "domain"})

    client = await aiohttp_client(
        _mini_app(
            web.post("/api/filters/{filter_id}", by_id),
            web.get("/api/filters/{filter_id}", by_id),
            web.post("/api/filters/validate", validate),
            web.post("/api/emails/{id}", email_by_id),
            web.post("/api/emails/batch", batch),
            web.get("/api/domains/{domain_id}", domain),
            web.get("/api/domains/{domain_id}/addresses", domain_addresses),
        )
    )
    assert await (await client.post("/api/filters/validate")).json() == {"route": "validate"}
    assert (await (await client.post("/api/filters/f1")).json())["route"] == "item"
    assert await (await client.post("/api/emails/batch")).json() == {"route": "batch"}
    assert (await (await client.post("/api/emails/e1")).json())["route"] == "email"
    assert await (await client.get("/api/domains/d1/addresses")).json() == {
        "route": "addresses",
        "domain": "d1",
    }


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, (1, 10, None, "name", "asc")),
        ({"per_page": "25"}, (1, 25, None, "name", "asc")),
        ({"per_page": "100"}, (1, 100, None, "name", "asc")),
        ({"per_page": "30"}, (1, 10, None, "name", "asc")),
        ({"per_page": "abc"}, (1, 10, None, "name", "asc")),
        (
            {"page": "3", "sort": "created_at", "direction": "DESC"},
            (3, 10, None, "created_at", "desc"),
        ),
        ({"sort": "password_hash"}, (1, 10, None, "name", "asc")),
        ({"search": "  foo "}, (1, 10, "foo", "name", "asc")),
    ],
)
def test_list_parameters(query: dict[str, str], expected: tuple[Any, ...]):
    sorts = Sorts({"name": "name", "created_at": "created_at"}, "name", "asc")
    p = parse_list_params(query, sorts)
    assert (p.page, p.per_page, p.search, p.sort, p.direction) == expected


@pytest.mark.parametrize("query", [{"page": "0"}, {"page": "x"}, {"direction": "sideways"}])
def test_bad_list_parameters_are_invalid_parameter(query: dict[str, str]):
    with pytest.raises(errors.MailError) as info:
        parse_list_params(query, Sorts({"name": "name"}, "name"))
    assert info.value.name == "invalid_parameter"
    assert info.value.status == 400


def test_search_escapes_wildcards():
    p = parse_list_params({"search": "50%_off"}, Sorts({"name": "name"}, "name"))
    assert p.search_pattern == "%50\\%\\_off%"


def test_envelope_counts_pages():
    p = parse_list_params({"per_page": "10", "page": "2"}, Sorts({"n": "n"}, "n"))
    assert list_envelope([{"object": "x"}], p, 11) == {
        "object": "list",
        "data": [{"object": "x"}],
        "page": 2,
        "per_page": 10,
        "total": 11,
        "pages": 2,
    }
    assert list_envelope([], p, 0)["pages"] == 0


async def test_list_endpoint_paginates_sorts_and_ignores_unknown_sort(client, runtime, clock):
    account, headers = await signed_in(runtime)
    for _ in range(11):
        clock.advance(60)
        await make_session(runtime, account)
    resp = await client.get("/api/account/sessions", headers=headers)
    body = await resp.json()
    assert (body["object"], body["page"], body["per_page"], body["total"], body["pages"]) == (
        "list",
        1,
        10,
        12,
        2,
    )
    assert len(body["data"]) == 10
    assert all(item["object"] == "session" for item in body["data"])
    resp = await client.get(
        "/api/account/sessions?page=2&per_page=7&sort=created_at&direction=asc", headers=headers
    )
    body = await resp.json()
    assert (body["page"], body["per_page"], body["pages"]) == (2, 10, 2)
    created = [item["created_at"] for item in body["data"]]
    assert len(created) == 2
    assert created == sorted(created)
    # An unknown sort is ignored: the same answer as the default sort.
    default = await (await client.get("/api/account/sessions", headers=headers)).json()
    unknown = await (
        await client.get("/api/account/sessions?sort=token_hash", headers=headers)
    ).json()
    assert unknown == default
    resp = await client.get("/api/account/sessions?sort=created_at&direction=asc", headers=headers)
    data = (await resp.json())["data"]
    assert data[0]["current"] is True  # the signed-in session is the oldest
    resp = await client.get("/api/account/sessions?direction=up", headers=headers)
    assert resp.status == 400
    assert (await resp.json())["name"] == "invalid_parameter"


async def test_another_accounts_resource_is_404_like_a_missing_one(client, runtime):
    _, headers = await signed_in(runtime)
    _, other_headers = await signed_in(runtime)
    resp = await client.get("/api/account/sessions", headers=other_headers)
    other_session = (await resp.json())["data"][0]["id"]
    replies = []
    for target in (other_session, "00000000-0000-0000-0000-000000000000", "not-a-uuid"):
        resp = await client.delete(f"/api/account/sessions/{target}", headers=headers)
        replies.append((resp.status, await resp.json()))
    assert replies[0] == (
        404,
        {"statusCode": 404, "name": "not_found", "message": "session not found"},
    )
    assert replies[0] == replies[1] == replies[2]
    # ...and the other account's session still works.
    assert (await client.get("/api/auth/me", headers=other_headers)).status == 200


def test_owned_answers_404_for_missing_and_foreign_rows():
    from types import SimpleNamespace

    from mail.web.ownership import owned, parse_uuid

    me = SimpleNamespace(id="11111111-1111-1111-1111-111111111111")
    # A record carrying its owner's id (a Domain, an Address, a Filter...).
    mine = SimpleNamespace(id="d1", account_id=me.id)
    assert owned(mine, me, "domain") is mine
    foreign = SimpleNamespace(id="d2", account_id="22222222-2222-2222-2222-222222222222")
    for row in (None, foreign):
        with pytest.raises(errors.MailError) as info:
            owned(row, me, "domain")
        assert (info.value.status, info.value.name, info.value.message) == (
            404,
            "not_found",
            "domain not found",
        )
    with pytest.raises(errors.MailError) as info:
        parse_uuid("../etc", "domain")
    assert info.value.status == 404
