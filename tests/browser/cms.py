"""What the CMS admin's browser tests share: built bundles, one gateway per module, API setup."""

from __future__ import annotations

import fcntl
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.browser.conftest import HIGH_LIMITS, Screens
from tests.conftest import ROOT, GatewayProcess, _fresh_database, free_port, launch_gateway

PASSWORD = "correct horse battery staple"
OWNER = "owner@example.com"


def build_bundles() -> None:
    """`make assets`: a no-op when frontend/dist is newer than its sources.

    Locked, so parallel test workers never build into the same folder at once.
    """
    lock_path = ROOT / "frontend" / ".build.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["make", "--no-print-directory", "assets"], cwd=ROOT, check=True)


def cms_gateway(home: Path, database_url: str, *args: str, **env: str) -> GatewayProcess:
    """A gateway on its own port, PUBLIC_URL its address; ``env`` adds settings."""
    port = free_port()
    return launch_gateway(
        home,
        0,
        *args,
        env={
            "DATABASE_URL": database_url,
            "PORT": str(port),
            "PUBLIC_URL": f"http://127.0.0.1:{port}",
            **HIGH_LIMITS,
            **env,
        },
    )


@pytest.fixture(scope="module")
def module_gateway(
    pg_admin_dsn: str, template_db: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GatewayProcess]:
    """One gateway (and database) for every test of a module: starting one costs seconds."""
    build_bundles()
    # The loop ends after the gateway stops, and the database is dropped then.
    for url in _fresh_database(pg_admin_dsn, template_db):
        gateway = cms_gateway(tmp_path_factory.mktemp("cms"), url)
        try:
            yield gateway
        finally:
            gateway.stop()


class Cms:
    """The CMS API as a script calls it (Bearer token: no CSRF question)."""

    def __init__(self, base_url: str, prefix: str = "/cms") -> None:
        self.client = httpx.Client(base_url=base_url + prefix + "/api", timeout=10)

    def sign_in(self, email: str, password: str = PASSWORD) -> Cms:
        response = self.client.post("/auth/login", json={"email": email, "password": password})
        assert response.status_code == 200, response.text
        self.client.headers["Authorization"] = "Bearer " + response.json()["token"]
        return self

    def call(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        response = self.client.request(method, path, json=body)
        assert response.status_code == status, response.text
        return response.json() if response.content else None


def owner_api(base_url: str) -> Cms:
    """The site's owner, claiming the site through the API when nobody has."""
    cms = Cms(base_url)
    if cms.call("GET", "/auth/setup")["setupRequired"]:
        cms.call(
            "POST", "/auth/setup", {"email": OWNER, "password": PASSWORD, "name": "Olive"}, 201
        )
    return cms.sign_in(OWNER)


def signed_in(open_tab: Callable[[], Screens], email: str, path: str = "/cms/admin") -> Screens:
    """A new tab (its own cookies) signed in through the sign-in page."""
    tab = open_tab()
    tab.page.goto(path)
    tab.page.wait_for_url("**/admin/signin**")
    tab.page.get_by_label("Email").fill(email)
    tab.page.get_by_label("Password").fill(PASSWORD)
    tab.page.get_by_role("button", name="Sign in").click()
    tab.page.wait_for_url(lambda url: "/signin" not in url)
    return tab
