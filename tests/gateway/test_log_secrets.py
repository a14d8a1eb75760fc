"""LOG_FORMAT=json on the real process: every line an object, no secret anywhere.

The test walks what handles secrets (sign-up, login, TOTP, an API key, a
send, a webhook and its secret, a CMS session, agent key and webhook, an
OAuth authorization code flow with a refresh) against the real gateway,
collects every secret it saw, then searches the whole log for each. It also
follows one request id from the sending API into the outbound worker's log
lines and the Received field of the relayed message.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pyotp
import pytest
from aiohttp import web

from common.db import Database
from mail.webhooks.delivery import DELIVER_JOB
from tests.conftest import GatewayProcess
from tests.gateway.test_observability import scrape, value
from tests.mail.dns_server import DnsServer
from tests.mail.hosting_fixtures import hosting_env
from tests.mail.sending_helpers import api_key, sending_domain
from tests.mta.sending import receiver

PASSWORD = "log-test password 9f1c2e7a"
CMS_PASSWORD = "cms-log-test password 3d8b1f4e"
VERIFIER = "a-pkce-code-verifier-for-the-log-test-0123456789abcdef"
REDIRECT_URI = "https://client.example/callback"
TRACE = "trace-7e2f0c9a41"


@pytest.fixture
async def mail_dns() -> AsyncIterator[DnsServer]:
    server = DnsServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


@dataclass
class Hooks:
    """What the local webhook endpoint received: each request's headers."""

    url: str = ""
    seen: list[dict[str, str]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait_for(self, condition: Callable[[], bool], seconds: float = 20) -> None:
        async def wait() -> None:
            while not condition():
                self.arrived.clear()
                await self.arrived.wait()

        await asyncio.wait_for(wait(), seconds)


@pytest.fixture
async def webhook_receiver() -> AsyncIterator[Hooks]:
    hooks = Hooks()

    async def hook(request: web.Request) -> web.Response:
        await request.read()
        hooks.seen.append(dict(request.headers))
        hooks.arrived.set()
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    hooks.url = f"http://127.0.0.1:{port}/hook"
    try:
        yield hooks
    finally:
        await runner.cleanup()


def session_cookie(response: aiohttp.ClientResponse, name: str) -> str:
    morsel = response.cookies.get(name)
    assert morsel is not None, f"no {name} cookie"
    return morsel.value


async def ok(response: aiohttp.ClientResponse, status: int = 200) -> Any:
    assert response.status == status, await response.text()
    return await response.json() if response.content_length != 0 else None


async def test_json_logs_hold_no_secret_and_follow_the_request_id(
    database_url: str,
    gateway_process: Callable[..., GatewayProcess],
    mail_dns: DnsServer,
    webhook_receiver: Hooks,
) -> None:
    hooks = webhook_receiver
    async with receiver() as (relay, relay_port):
        gateway = await asyncio.to_thread(
            gateway_process,
            env={
                "DATABASE_URL": database_url,
                "LOG_FORMAT": "json",
                "ACCESS_LOG": "true",
                "WEBHOOK_ALLOW_PRIVATE": "true",
                "OUTBOUND_RELAY": f"127.0.0.1:{relay_port}",
                **hosting_env(mail_dns),
            },
        )
        secrets: dict[str, str] = {"password": PASSWORD, "cms password": CMS_PASSWORD}
        jar = aiohttp.DummyCookieJar()  # cookies are sent by hand, as headers
        async with aiohttp.ClientSession(gateway.base_url, cookie_jar=jar) as http:
            await walk_every_secret(http, secrets, hooks.url, relay, mail_dns)
        # The email.sent of the send reached the mail webhook, signed with its secret,
        # from a delivery job that ran under the send's request id.
        await hooks.wait_for(
            lambda: any(not h["webhook-id"].startswith("msg_test_") for h in hooks.seen)
        )
        assert all("webhook-signature" in h for h in hooks.seen)
        assert TRACE in await delivery_job_request_ids(database_url)
        # What this walk did shows in the metrics too.
        samples = await asyncio.to_thread(scrape, gateway)
        assert value(samples, "mail_outbound_delivery_attempts_total", outcome="delivered") >= 2
        assert value(samples, "webhook_deliveries_total", service="mail", outcome="delivered") >= 1
        assert value(samples, "jobs_runs_total", kind=DELIVER_JOB, outcome="done") >= 1
        assert value(samples, "http_requests_total", route="/oauth/token", status="200") == 2
        assert value(samples, "http_requests_total", route="/oauth/token", status="400") == 1
    await asyncio.to_thread(gateway.stop)

    log = gateway.log()
    lines = [line for line in log.splitlines() if line.strip()]
    assert lines
    entries = []
    for line in lines:
        entry = json.loads(line)  # every line is one JSON object
        assert {"time", "level", "logger", "message", "request_id"} <= set(entry), line
        entries.append(entry)
    for what, secret in secrets.items():
        assert secret not in log, f"the {what} is in the log"
    # The request id of the send reached the outbound worker's log lines.
    assert any(e["request_id"] == TRACE and e["logger"].startswith("mta") for e in entries), [
        e for e in entries if e["logger"].startswith("mta")
    ]


async def delivery_job_request_ids(database_url: str) -> set[str | None]:
    db = await Database.connect(database_url, size=1)
    try:
        rows = await db.fetch_all(
            "SELECT request_id FROM common.jobs WHERE kind = %s", (DELIVER_JOB,)
        )
    finally:
        await db.close()
    return {row["request_id"] for row in rows}


async def sent_to(relay: Any, rcpt: str) -> Any:
    """The relayed message for ``rcpt`` (the panel's own mail goes through the relay too)."""
    for count in range(1, 10):
        for message in await relay.wait_for(count):
            if rcpt in message.rcpts:
                return message
    raise AssertionError(f"nothing relayed to {rcpt}")


async def walk_every_secret(
    http: aiohttp.ClientSession,
    secrets: dict[str, str],
    hook_url: str,
    relay: Any,
    dns: DnsServer,
) -> None:
    # Sign-up: the first account owns the instance.
    email = "owner@example.com"
    signup = await http.post(
        "/api/auth/signup", json={"email": email, "password": PASSWORD, "name": "Owner"}
    )
    await ok(signup, 201)
    secrets["sign-up session"] = session_cookie(signup, "svc_session")
    headers = {"Cookie": f"svc_session={secrets['sign-up session']}"}

    # TOTP: set up, enable with a code, then a login that needs one.
    setup = await ok(await http.post("/api/auth/totp/setup", headers=headers))
    secrets["totp secret"] = setup["secret"]
    totp = pyotp.TOTP(setup["secret"])
    await ok(await http.post("/api/auth/totp/enable", json={"code": totp.now()}, headers=headers))
    refused = await http.post("/api/auth/login", json={"email": email, "password": "wrong " * 3})
    assert refused.status in (400, 401), await refused.text()
    # The next step's code: the one just used is spent (replay protection).
    code = totp.at(time.time() + totp.interval)
    login = await http.post(
        "/api/auth/login", json={"email": email, "password": PASSWORD, "totp_code": code}
    )
    await ok(login)
    secrets["login session"] = session_cookie(login, "svc_session")
    headers = {"Cookie": f"svc_session={secrets['login session']}"}

    # A mail webhook: its secret shown once, a signed test delivery.
    webhook = await ok(
        await http.post(
            "/api/webhooks", json={"endpoint": hook_url, "events": ["email.sent"]}, headers=headers
        ),
        201,
    )
    secrets["mail webhook secret"] = webhook["secret"]
    await ok(await http.post(f"/api/webhooks/{webhook['id']}/test", json={}, headers=headers))

    # An API key and a send through it, under a request id we choose.
    await sending_domain(http, headers, dns)
    key = await api_key(http, headers)
    secrets["api key"] = key
    sent = await http.post(
        "/api/emails",
        json={
            "from": "Owner <hello@example.com>",
            "to": ["ann@example.org"],
            "subject": "Hello",
            "text": "Hi Ann",
        },
        headers={"Authorization": f"Bearer {key}", "X-Request-Id": TRACE},
    )
    await ok(sent)
    assert sent.headers["X-Request-Id"] == TRACE
    message = await sent_to(relay, "ann@example.org")
    trace_field = message.message["Received"]
    assert f"(trace {TRACE})" in " ".join(trace_field.split()), trace_field

    # The CMS: a bearer session, an agent key, a webhook secret.
    cms = await ok(
        await http.post(
            "/cms/api/auth/setup",
            json={"email": email, "password": CMS_PASSWORD, "name": "Owner", "mode": "bearer"},
        ),
        201,
    )
    secrets["cms token"] = cms["token"]
    bearer = {"Authorization": f"Bearer {cms['token']}"}
    agent = await ok(
        await http.post(
            "/cms/api/agent-keys",
            json={"name": "agent", "grants": ["content.read"], "password": CMS_PASSWORD},
            headers=bearer,
        ),
        201,
    )
    secrets["cms agent key"] = agent["key"]
    cms_hook = await ok(
        await http.post(
            "/cms/api/webhooks", json={"name": "hook", "url": hook_url}, headers=bearer
        ),
        201,
    )
    secrets["cms webhook secret"] = cms_hook["secret"]

    await oauth_flow(http, headers, secrets)


async def oauth_flow(
    http: aiohttp.ClientSession, headers: dict[str, str], secrets: dict[str, str]
) -> None:
    client = await ok(
        await http.post(
            "/admin/oauth/clients",
            json={
                "name": "Log test app",
                "public": False,
                "allowed_scopes": ["openid", "email"],
                "redirect_uris": [REDIRECT_URI],
            },
            headers=headers,
        ),
        201,
    )
    secrets["oauth client secret"] = client["client_secret"]
    challenge = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest())
    query = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": REDIRECT_URI,
        "scope": "openid email",
        "state": "s-1",
        "code_challenge": challenge.rstrip(b"=").decode(),
        "code_challenge_method": "S256",
    }
    await ok(await http.get("/oauth/authorize/info", params=query, headers=headers))
    approved = await ok(await http.post("/oauth/authorize/approve", json=query, headers=headers))
    code = parse_qs(urlsplit(approved["redirect_url"]).query)["code"][0]
    secrets["authorization code"] = code
    secrets["code verifier"] = VERIFIER
    auth = {
        "Authorization": aiohttp.encode_basic_auth(client["client_id"], client["client_secret"])
    }
    tokens = await ok(
        await http.post(
            "/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": REDIRECT_URI,
                "code_verifier": VERIFIER,
            },
            headers=auth,
        )
    )
    secrets["access token"] = tokens["access_token"]
    secrets["refresh token"] = tokens["refresh_token"]
    refreshed = await ok(
        await http.post(
            "/oauth/token",
            data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
            headers=auth,
        )
    )
    secrets["refreshed access token"] = refreshed["access_token"]
    secrets["refreshed refresh token"] = refreshed["refresh_token"]
    # A replayed (rotated) refresh token: refused, and the refusal logs nothing of it.
    replay = await http.post(
        "/oauth/token",
        data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
        headers=auth,
    )
    assert replay.status == 400
    assert re.fullmatch(r"[A-Za-z0-9._~+/=-]+", secrets["access token"])
