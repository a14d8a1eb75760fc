"""One real gateway process for a module's network tests, with an owner signed in everywhere."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import GatewayProcess, _fresh_database, launch_gateway

CMS_EMAIL = "owner@cms.example"
CMS_PASSWORD = "correct horse battery staple"
MAIL_EMAIL = "owner@mail.example"
MAIL_PASSWORD = "correct horse battery staple"


@dataclass
class LiveGateway:
    process: GatewayProcess
    mail_cookie: str  # svc_session of the instance owner (mail and OAuth admin)
    cms_token: str  # a CMS owner's session token (Bearer)

    @property
    def port(self) -> int:
        return self.process.port


@pytest.fixture(scope="module")
def live_gateway(
    pg_admin_dsn: str, template_db: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveGateway]:
    home: Path = tmp_path_factory.mktemp("live-gateway")
    for database_url in _fresh_database(pg_admin_dsn, template_db):
        env = {
            "DATABASE_URL": database_url,
            "BOOTSTRAP_EMAIL": CMS_EMAIL,
            "BOOTSTRAP_PASSWORD": CMS_PASSWORD,
            # Many sign-in attempts come from 127.0.0.1 within a second.
            "RATE_LIMIT_PER_SECOND": "100000",
            "AUTH_RATE_LIMIT_PER_SECOND": "100000",
        }
        gp = launch_gateway(home, 0, env=env)
        try:
            with httpx.Client(base_url=gp.base_url) as http:
                signup = http.post(
                    "/api/auth/signup", json={"email": MAIL_EMAIL, "password": MAIL_PASSWORD}
                )
                assert signup.status_code == 201, signup.text
                login = http.post(
                    "/cms/api/auth/login", json={"email": CMS_EMAIL, "password": CMS_PASSWORD}
                )
                assert login.status_code == 200, login.text
            yield LiveGateway(gp, signup.cookies["svc_session"], login.json()["token"])
        finally:
            gp.stop()
