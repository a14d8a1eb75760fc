"""The gateway on a real port with JMAP, a mailbox with a password, and jmapc pointed at http."""

from __future__ import annotations

import asyncio
import base64
import functools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import jmapc
import pytest
import requests
from jmapc.session import Session

from common.passwords import hash_password
from common.runtime import Runtime
from gateway.app import build_app
from tests.mta import factories

PASSWORD = "correct horse battery staple"


class HttpClient(jmapc.Client):
    """jmapc as published, except that it discovers the session over http (a test server)."""

    @functools.cached_property
    def jmap_session(self) -> Session:
        r = self.requests_session.get(f"http://{self._host}/.well-known/jmap", timeout=10)
        r.raise_for_status()
        return Session.from_dict(r.json())


@dataclass
class Mailbox:
    email: str
    address_id: str
    account_id: str
    domain_id: str
    password: str = PASSWORD

    @property
    def basic(self) -> str:
        token = base64.b64encode(f"{self.email}:{self.password}".encode()).decode()
        return f"Basic {token}"


async def make_mailbox(db: Any, email: str) -> Mailbox:
    ids = await factories.mailbox_owner(db, email)
    await db.execute(
        "UPDATE mail.addresses SET password_hash = %s WHERE id = %s",
        (await hash_password(PASSWORD), ids["address_id"]),
    )
    return Mailbox(email=email, **ids)


@pytest.fixture
async def alice(db: Any) -> Mailbox:
    return await make_mailbox(db, "alice@example.test")


@dataclass
class Server:
    host: str  # 127.0.0.1:port
    app: Any

    @property
    def url(self) -> str:
        return f"http://{self.host}"

    def client(self, user: str, password: str = PASSWORD, **kw: Any) -> HttpClient:
        return HttpClient.create_with_password(self.host, user, password, **kw)

    def token_client(self, token: str, **kw: Any) -> HttpClient:
        return HttpClient.create_with_api_token(self.host, token, **kw)

    async def post(self, auth: str, body: Any, **kw: Any) -> requests.Response:
        return await asyncio.to_thread(
            requests.post,
            f"{self.url}/jmap",
            json=body,
            headers={"Authorization": auth, **kw.pop("headers", {})},
            timeout=10,
            **kw,
        )


@pytest.fixture
async def jmap_server(runtime: Runtime, aiohttp_server: Any) -> AsyncIterator[Server]:
    server = await aiohttp_server(build_app(runtime))
    yield Server(host=f"127.0.0.1:{server.port}", app=server.app)


def run(fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """A jmapc (blocking) call off the event loop the server runs on."""
    return asyncio.to_thread(fn, *args, **kw)


MAIL = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"]
