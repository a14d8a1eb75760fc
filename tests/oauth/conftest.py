"""Fixtures for the OAuth server: a real HTTP server on a free port, the test host,
an admin client over HTTP, and Authlib clients to drive the flows."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from common.clock import ManualClock
from common.runtime import Runtime
from oauth import OAuthConfig, create_app
from oauth.server import AuthorizationServer
from tests.conftest import TEST_SECRET
from tests.oauth.authlib_client import AsyncOAuth2Client
from tests.oauth.host import USER_HEADER, TestHost, User

SCOPES = ("openid", "profile", "email", "mail.read", "mail.send")
ALICE = 1
BOB = 2
ADMIN = 9
REDIRECT_URI = "https://client.example/callback"


@pytest.fixture
def clock() -> ManualClock:
    # Real "now", so PyJWT (which reads the machine clock) agrees with the server.
    return ManualClock(datetime.now(UTC).replace(microsecond=0))


@pytest.fixture
def host() -> TestHost:
    h = TestHost()
    h.add(User(ALICE, "alice@example.com", "Alice"))
    h.add(User(BOB, "bob@example.com", "Bob"))
    h.add(User(ADMIN, "admin@example.com", "Admin", is_admin=True))
    return h


@pytest.fixture
def oauth_config(runtime: Runtime, host: TestHost) -> OAuthConfig:
    return OAuthConfig(
        db=runtime.db,
        secret=TEST_SECRET,
        scopes=SCOPES,
        load_user=host.load_user,
        build_access_token_claims=host.build_access_token_claims,
        require_user=host.require_user,
        require_admin=host.require_admin,
        audit=host.audit,
        clock=runtime.clock,
    )


@dataclass
class OAuthServer:
    base_url: str
    config: OAuthConfig
    server: AuthorizationServer
    http: httpx.AsyncClient

    @property
    def issuer(self) -> str:
        return self.base_url + self.config.base_path

    def url(self, path: str) -> str:
        return self.issuer + path

    def admin_url(self, path: str) -> str:
        return self.base_url + self.config.admin_base_path + path

    async def create_client(
        self,
        *,
        public: bool = False,
        scopes: tuple[str, ...] = ("openid", "profile", "email", "mail.read"),
        redirect_uris: tuple[str, ...] = (REDIRECT_URI,),
        name: str = "Test client",
    ) -> dict[str, Any]:
        resp = await self.http.post(
            self.admin_url("/clients"),
            json={
                "name": name,
                "public": public,
                "allowed_scopes": list(scopes),
                "redirect_uris": list(redirect_uris),
            },
            headers={USER_HEADER: str(ADMIN)},
        )
        assert resp.status_code == 201, resp.text
        return resp.json()

    def oauth_client(
        self, client: dict[str, Any], method: str | None = None, **kwargs: Any
    ) -> AsyncOAuth2Client:
        if method is None:
            method = "none" if client["public"] else "client_secret_basic"
        return AsyncOAuth2Client(
            client_id=client["client_id"],
            client_secret=client.get("client_secret"),
            token_endpoint_auth_method=method,
            revocation_endpoint_auth_method=method,
            code_challenge_method="S256",
            redirect_uri=kwargs.pop("redirect_uri", REDIRECT_URI),
            **kwargs,
        )

    async def consent(
        self, authorization_url: str, *, user: int = ALICE, approve: bool = True
    ) -> httpx.Response:
        """What the host's consent page does: show info, then approve (or deny)."""
        query = dict(httpx.URL(authorization_url).params)
        info = await self.http.get(
            self.url("/authorize/info"), params=query, headers={USER_HEADER: str(user)}
        )
        if info.status_code != 200:
            return info
        action = "/authorize/approve" if approve else "/authorize/deny"
        return await self.http.post(self.url(action), json=query, headers={USER_HEADER: str(user)})

    async def authorize(
        self,
        oauth: AsyncOAuth2Client,
        verifier: str,
        *,
        scope: str = "openid email",
        user: int = ALICE,
    ) -> str:
        """Run the front channel; return the redirect URL carrying the code."""
        url, _state = oauth.create_authorization_url(
            self.url("/authorize"), code_verifier=verifier, scope=scope
        )
        resp = await self.consent(url, user=user)
        assert resp.status_code == 200, resp.text
        return str(resp.json()["redirect_url"])

    async def tokens(
        self, oauth: AsyncOAuth2Client, *, scope: str = "openid email", user: int = ALICE
    ) -> dict[str, Any]:
        """A full authorization_code exchange through Authlib."""
        verifier = VERIFIER
        redirect_url = await self.authorize(oauth, verifier, scope=scope, user=user)
        return dict(
            await oauth.fetch_token(
                self.url("/token"), authorization_response=redirect_url, code_verifier=verifier
            )
        )

    async def form(
        self, path: str, data: dict[str, str], *, auth: tuple[str, str] | None = None
    ) -> httpx.Response:
        return await self.http.post(self.url(path), data=data, auth=auth)


VERIFIER = "v" * 20 + "-verifier-of-pkce-" + "x" * 20


@pytest.fixture
async def start_oauth(
    oauth_config: OAuthConfig, aiohttp_server: Any
) -> AsyncIterator[Callable[..., Any]]:
    started: list[httpx.AsyncClient] = []

    async def start(**overrides: Any) -> OAuthServer:
        config = replace(oauth_config, **overrides) if overrides else oauth_config
        server = AuthorizationServer(config)
        test_server = await aiohttp_server(create_app(config, server=server))
        base_url = str(test_server.make_url("")).rstrip("/")
        http = httpx.AsyncClient(timeout=10)
        started.append(http)
        return OAuthServer(base_url=base_url, config=config, server=server, http=http)

    yield start
    for http in started:
        await http.aclose()


@pytest.fixture
async def oauth_server(start_oauth: Callable[..., Any]) -> OAuthServer:
    return await start_oauth()  # type: ignore[no-any-return]
