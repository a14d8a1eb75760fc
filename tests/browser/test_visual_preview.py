"""The example site's visual preview in a frame of the CMS admin's origin (Debian's chromium).

The gateway runs as `make run` does in development: the example host under
/site with its seed. The admin's origin is PUBLIC_URL (http://127.0.0.1:port);
the site is loaded as http://localhost:port, another origin, so the frame is a
real cross-origin frame that the site's frame-ancestors must allow. The
parent documents are answered in the browser (page.route), as the admin's
own page would frame the preview.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.browser.conftest import Screens
from tests.conftest import GatewayProcess

EMAIL = "owner@example.com"
PASSWORD = "correct horse battery staple"
MARKED = "[data-visual-section], [data-visual-field], [data-visual-hidden]"


@pytest.fixture
def gateway_env() -> dict[str, str]:
    # Every loopback address, so 127.0.0.2 is a third origin of the same gateway.
    return {"BOOTSTRAP_EMAIL": EMAIL, "BOOTSTRAP_PASSWORD": PASSWORD, "HOST": "0.0.0.0"}


def _preview_path(base: str) -> str:
    api = base + "/cms/api"
    login = httpx.post(api + "/auth/login", json={"email": EMAIL, "password": PASSWORD})
    assert login.status_code == 200, login.text
    headers = {"Authorization": f"Bearer {login.json()['token']}"}
    pages = httpx.get(api + "/entries?type=page&search=about", headers=headers).json()
    about = next(e for e in pages["data"] if e["slug"] == "about")
    link = httpx.post(api + f"/entries/{about['id']}/preview", headers=headers, json={})
    assert link.status_code == 201, link.text
    return str(link.json()["siteUrl"])


def _frame_from(tab: Screens, origin: str, src: str) -> None:
    """A document of ``origin`` framing ``src``, as the admin's page frames the preview.

    The parent is a real answer of the gateway (its health check, a document
    without a policy of its own): Chromium's local network access checks
    refuse a local frame in a document the test would make up.
    """
    tab.page.goto(origin + "/healthz")
    tab.page.evaluate(
        """src => {
            const frame = document.createElement("iframe");
            frame.title = "Preview";
            frame.src = src;
            document.body.append(frame);
        }""",
        src,
    )


def test_the_preview_with_visual_1_is_editable_in_the_admins_frame_and_the_public_page_is_not(
    gateway: GatewayProcess, screens: Any
) -> None:
    admin = gateway.base_url  # PUBLIC_URL's origin: http://127.0.0.1:port
    site = admin.replace("127.0.0.1", "localhost")
    preview = site + _preview_path(admin) + "&visual=1"
    tab = screens()
    tab.allowed.add(site)

    _frame_from(tab, admin, preview)
    frame = tab.page.frame_locator("iframe")
    hero = frame.locator('[data-visual-section="hero"]')
    hero.wait_for()
    assert hero.get_attribute("data-visual-movable") == "false"
    assert frame.locator('[data-visual-field="$title"]').inner_text() == "About"
    hidden = frame.locator('[data-visual-section="features"]')
    assert hidden.get_attribute("data-visual-hidden") == "true"
    assert frame.locator('[data-visual-reference="person"]').count() == 1
    assert not tab.problems, tab.problems

    # The public page, at the top level: no selection attribute, hidden section gone.
    tab.page.goto(site + "/site/about")
    assert tab.page.locator(MARKED).count() == 0
    assert tab.page.locator("#features").count() == 0
    tab.check("example-site-about")

    # A page of any other origin may not frame it: the browser refuses (frame-ancestors).
    other = admin.replace("127.0.0.1", "127.0.0.2")
    tab.allowed.add(other)
    with tab.page.expect_console_message(lambda m: "frame-ancestors" in m.text):
        _frame_from(tab, other, preview)
    assert tab.page.frame_locator("iframe").locator(MARKED).count() == 0
    tab.problems.clear()  # that refusal was the point
