"""Client authentication at the token endpoint and the RFC 6749 5.2 error shapes."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import AsyncIterator

import httpx
import pytest
from authlib.integrations.base_client import OAuthError as AuthlibOAuthError

from oauth.rfc6749.client_auth import throttle_address
from tests.oauth.conftest import OAuthServer


def basic(client_id: str, secret: str) -> dict[str, str]:
    raw = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    return {"Authorization": f"Basic {raw}"}


async def post_token(srv: OAuthServer, data: dict, headers: dict | None = None) -> httpx.Response:
    return await srv.http.post(srv.url("/token"), data=data, headers=headers or {})


async def test_wrong_secret_is_401_with_www_authenticate(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    wrong = dict(client, client_secret="wrong-secret")
    async with oauth_server.oauth_client(wrong) as oauth:
        with pytest.raises(AuthlibOAuthError) as err:
            await oauth.refresh_token(oauth_server.url("/token"), refresh_token="whatever")
    assert err.value.error == "invalid_client"
    resp = await post_token(
        oauth_server,
        {"grant_type": "refresh_token", "refresh_token": "x"},
        basic(client["client_id"], "wrong"),
    )
    assert resp.status_code == 401
    assert resp.headers["WWW-Authenticate"].startswith("Basic")
    assert resp.headers["Cache-Control"] == "no-store"
    assert set(resp.json()) == {"error", "error_description"}


async def test_repeated_failures_slow_the_client_down(oauth_server: OAuthServer, clock):
    client = await oauth_server.create_client()
    data = {"grant_type": "refresh_token", "refresh_token": "x"}
    for _ in range(5):
        resp = await post_token(oauth_server, data, basic(client["client_id"], "wrong"))
        assert resp.status_code == 401
    # Locked: even the right secret must wait.
    resp = await post_token(oauth_server, data, basic(client["client_id"], client["client_secret"]))
    assert resp.status_code == 429
    assert resp.json()["error"] == "slow_down"
    assert int(resp.headers["Retry-After"]) >= 1
    clock.advance(2)
    resp = await post_token(oauth_server, data, basic(client["client_id"], client["client_secret"]))
    assert resp.status_code == 400  # authenticated; the refresh token itself is bad
    assert resp.json()["error"] == "invalid_grant"


async def test_failures_of_one_client_do_not_lock_another(oauth_server: OAuthServer):
    target = await oauth_server.create_client()
    bystander = await oauth_server.create_client()
    data = {"grant_type": "refresh_token", "refresh_token": "x"}
    for _ in range(6):
        await post_token(oauth_server, data, basic(target["client_id"], "wrong"))
    resp = await post_token(
        oauth_server, data, basic(bystander["client_id"], bystander["client_secret"])
    )
    assert resp.status_code == 400


@contextlib.asynccontextmanager
async def from_address(address: str) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client whose connections leave from another loopback address."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with httpx.AsyncClient(transport=transport, timeout=10) as http:
        yield http


async def guess(http: httpx.AsyncClient, srv: OAuthServer, client_id: str, secret: str):
    return await http.post(
        srv.url("/token"),
        data={"grant_type": "refresh_token", "refresh_token": "x"},
        headers=basic(client_id, secret),
    )


async def test_a_strangers_failures_do_not_lock_the_real_client_out(
    oauth_server: OAuthServer, clock
):
    # The attacker knows the public client_id and connects from 127.0.0.2; the
    # real client connects from 127.0.0.1 (oauth_server.http, Authlib).
    client = await oauth_server.create_client()
    async with from_address("127.0.0.2") as attacker:
        for _ in range(5):
            assert (
                await guess(attacker, oauth_server, client["client_id"], "x")
            ).status_code == 401
        async with oauth_server.oauth_client(client) as oauth:
            tokens = await oauth_server.tokens(oauth)  # authorization_code exchange
            refreshed = await oauth.refresh_token(
                oauth_server.url("/token"), refresh_token=tokens["refresh_token"]
            )
        assert refreshed["access_token"]
        # The attacker's address stays throttled, even with the right secret.
        locked = await guess(attacker, oauth_server, client["client_id"], client["client_secret"])
        assert locked.status_code == 429
        assert locked.json()["error"] == "slow_down"
        assert locked.headers["Retry-After"] == "1"
        # Each further failure doubles its lock: 2 s now.
        clock.advance(2)
        assert (await guess(attacker, oauth_server, client["client_id"], "x")).status_code == 401
        clock.advance(1)
        again = await guess(attacker, oauth_server, client["client_id"], "x")
        assert again.status_code == 429
        assert again.headers["Retry-After"] == "1"
        # The real client, meanwhile, is never slowed.
        ok = await guess(
            oauth_server.http, oauth_server, client["client_id"], client["client_secret"]
        )
        assert ok.status_code == 400 and ok.json()["error"] == "invalid_grant"


async def test_many_addresses_guessing_tighten_the_rule_but_a_clean_address_gets_through(
    oauth_server: OAuthServer, clock
):
    client = await oauth_server.create_client()
    cid = client["client_id"]
    # 25 addresses x 4 failures: each under its own limit, 100 for the client.
    for n in range(10, 35):
        async with from_address(f"127.0.0.{n}") as http:
            for _ in range(4):
                assert (await guess(http, oauth_server, cid, "x")).status_code == 401
    async with from_address("127.0.0.200") as newcomer:
        assert (await guess(newcomer, oauth_server, cid, "x")).status_code == 401
        # Past the client-wide ceiling, one failure locks a new address.
        assert (await guess(newcomer, oauth_server, cid, "x")).status_code == 429
    # An address that has not failed still authenticates with the right secret.
    async with oauth_server.oauth_client(client) as oauth:
        assert (await oauth_server.tokens(oauth))["access_token"]
    # Fifteen minutes on, the ceiling has reset: a new address has its 5 tries again.
    clock.advance(15 * 60 + 1)
    async with from_address("127.0.0.201") as later:
        for _ in range(2):
            assert (await guess(later, oauth_server, cid, "x")).status_code == 401


@pytest.mark.parametrize(
    ("ip", "counted_as"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:bbbb::7", "2001:db8:1:2::/64"),
        ("::ffff:203.0.113.9", "203.0.113.9"),
        (None, "unknown"),
    ],
)
def test_failures_count_per_ipv4_address_and_per_ipv6_64(ip, counted_as):
    assert throttle_address(ip) == counted_as


async def test_basic_credentials_are_form_urldecoded(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    # RFC 6749 2.3.1: id and secret are form-urlencoded before Basic encoding.
    encoded_id = client["client_id"].replace("-", "%2D")
    resp = await post_token(
        oauth_server,
        {"grant_type": "refresh_token", "refresh_token": "x"},
        basic(encoded_id, client["client_secret"]),
    )
    assert resp.status_code == 400
    assert resp.json()["error"] == "invalid_grant"


@pytest.mark.parametrize(
    ("case", "status", "error"),
    [
        ("two_methods", 400, "invalid_request"),
        ("no_credentials", 401, "invalid_client"),
        ("unknown_client", 401, "invalid_client"),
        ("confidential_without_secret", 401, "invalid_client"),
        ("public_with_secret", 401, "invalid_client"),
        ("bad_basic", 401, "invalid_client"),
        ("no_grant_type", 400, "invalid_request"),
        ("unsupported_grant_type", 400, "unsupported_grant_type"),
        ("repeated_parameter", 400, "invalid_request"),
    ],
)
async def test_token_endpoint_refusals(oauth_server: OAuthServer, case, status, error):
    conf = await oauth_server.create_client()
    pub = await oauth_server.create_client(public=True)
    data: dict | list = {"grant_type": "refresh_token", "refresh_token": "x"}
    headers: dict = {}
    if case == "two_methods":
        headers = basic(conf["client_id"], conf["client_secret"])
        data = {**data, "client_id": conf["client_id"], "client_secret": conf["client_secret"]}
    elif case == "unknown_client":
        headers = basic("nobody", "secret")
    elif case == "confidential_without_secret":
        data = {**data, "client_id": conf["client_id"]}
    elif case == "public_with_secret":
        data = {**data, "client_id": pub["client_id"], "client_secret": "anything"}
    elif case == "bad_basic":
        headers = {"Authorization": "Basic !!!notbase64"}
    elif case == "no_grant_type":
        data = {"refresh_token": "x", "client_id": pub["client_id"]}
    elif case == "unsupported_grant_type":
        data = {"grant_type": "password", "client_id": pub["client_id"]}
    elif case == "repeated_parameter":
        data = [("grant_type", "refresh_token"), ("grant_type", "refresh_token")]
    if isinstance(data, list):
        resp = await oauth_server.http.post(
            oauth_server.url("/token"),
            content="&".join(f"{k}={v}" for k, v in data),
            headers={"Content-Type": "application/x-www-form-urlencoded", **headers},
        )
    else:
        resp = await post_token(oauth_server, data, headers)
    assert resp.status_code == status, resp.text
    assert resp.json()["error"] == error
    assert resp.headers["Cache-Control"] == "no-store"
    if status == 401:
        assert "WWW-Authenticate" in resp.headers


async def test_json_body_is_refused(oauth_server: OAuthServer):
    resp = await oauth_server.http.post(
        oauth_server.url("/token"), json={"grant_type": "refresh_token"}
    )
    assert resp.status_code == 400
    assert resp.json()["error"] == "invalid_request"


async def test_successful_token_response_is_not_cacheable(oauth_server: OAuthServer):
    client = await oauth_server.create_client()
    async with oauth_server.oauth_client(client) as oauth:
        first = await oauth_server.tokens(oauth)
    resp = await post_token(
        oauth_server,
        {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]},
        basic(client["client_id"], client["client_secret"]),
    )
    assert resp.status_code == 200
    assert resp.headers["Cache-Control"] == "no-store"
    assert resp.headers["Content-Type"].startswith("application/json")


async def test_unknown_path_and_wrong_verb_answer_in_oauth_shape(oauth_server: OAuthServer):
    resp = await oauth_server.http.get(oauth_server.url("/nope"))
    assert resp.status_code == 404
    assert resp.json()["error"] == "not_found"
    resp = await oauth_server.http.get(oauth_server.url("/token"))
    assert resp.status_code == 405
    assert resp.json()["error"] == "method_not_allowed"
    assert "POST" in resp.headers["Allow"]
