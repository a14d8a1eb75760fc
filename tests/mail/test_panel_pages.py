"""The panel's own pages (mail/pages/panel.py): signed-out visits, the navigation, the QR code.

The screens are walked in a real browser (tests/browser/); these check what a
page answers before any script runs.
"""

from __future__ import annotations

import re
from typing import Any

import pyotp
import pytest

from common.runtime import Runtime
from mail.pages.routes import NAV, NAV_GROUPS, OWNER_ONLY, section_of
from tests.mail.factories import signed_in

FILTER_ID = "0b0e0c4a-3f55-4d6e-9a8e-2f0f6c1d2e3f"
PANEL = (
    "/account",
    "/account/sessions",
    "/account/two-factor",
    "/filters",
    "/filters/new?address_id=x",
    f"/filters/{FILTER_ID}",
    "/referrals",
)
QR = "/account/two-factor/qr.svg"


@pytest.mark.parametrize("path", PANEL)
async def test_a_signed_out_visit_goes_to_sign_in_and_comes_back(client: Any, path: str) -> None:
    response = await client.get(path, allow_redirects=False)
    assert response.status == 303
    location = response.headers["Location"]
    assert location.startswith("/signin?next=")
    html = await (await client.get(location)).text()
    assert f'data-next="{path}"' in html


@pytest.mark.parametrize("path", PANEL)
async def test_each_screen_is_a_strict_page_with_its_section_marked(
    client: Any, runtime: Runtime, path: str
) -> None:
    account, headers = await signed_in(runtime)
    response = await client.get(path, headers=headers)
    assert response.status == 200
    assert "frame-ancestors 'none'" in response.headers["Content-Security-Policy"]
    html = await response.text()
    assert account.email in html
    assert not re.search(r"<script(?![^>]*\bsrc=)", html)
    assert "<style" not in html and " style=" not in html
    marked = re.findall(r'<a href="([^"]+)" aria-current="(page|location)"', html)
    # Exactly one section is current: the page itself, or the section above it.
    assert len(marked) == 1
    href, kind = marked[0]
    assert path == href or path.startswith(href + "/") or path.startswith(href + "?")
    assert kind == ("page" if path == href else "location")


def test_every_page_belongs_to_at_most_one_section() -> None:
    assert section_of("/") == "/"
    assert section_of("/account/sessions") == "/account"
    assert section_of("/accounts-elsewhere") == ""
    assert section_of("/signin") == ""
    assert section_of("/domains/1/addresses") == "/domains"
    assert section_of("/addresses/1") == "/domains"
    assert len({href for href, _ in NAV}) == len(NAV)


def test_every_section_is_in_exactly_one_group_of_the_navigation() -> None:
    grouped = [href for _, hrefs in NAV_GROUPS for href in hrefs]
    assert sorted(grouped) == sorted(href for href, _ in NAV)
    assert len(NAV_GROUPS) == 3 and all(len(hrefs) <= 4 for _, hrefs in NAV_GROUPS)


async def test_the_navigation_is_plain_grouped_links_before_any_script(
    client: Any, runtime: Runtime
) -> None:
    _, headers = await signed_in(runtime)
    html = await (await client.get("/filters", headers=headers)).text()
    # Each group's name, then its sections as links: what a browser without
    # scripts shows; the disclosure buttons stay hidden until js/nav.js runs.
    for group, hrefs in NAV_GROUPS:
        block = html[html.index(f'id="nav-{group.lower()}-label">{group}</span>') :]
        block = block[: block.index("</ul>")]
        shown = re.findall(r'<li><a href="([^"]+)"', block)
        assert shown == [h for h in hrefs if h not in OWNER_ONLY]
    assert re.search(r'<button type="button" class="group-button" aria-expanded="false"'
                     r' aria-controls="nav-mail" hidden>Mail<span class="visually-hidden">'
                     r" \(current section\)</span></button>", html)  # fmt: skip
    assert 'class="menu-button" aria-expanded="false" aria-controls="nav-groups" hidden' in html


async def test_only_pages_of_a_session_tell_their_modules_a_401_ends_it(
    client: Any, runtime: Runtime
) -> None:
    # On these a 401 from the API sends the person to sign-in (static/js/common.js);
    # on sign-in itself a 401 is a wrong password.
    _, headers = await signed_in(runtime)
    for path in ("/", "/webhooks", "/domains", "/billing", *PANEL):
        html = await (await client.get(path, headers=headers)).text()
        assert 'data-session="required"' in html, path
    for path in ("/signin", "/signup", "/forgot-password"):
        assert 'data-session="required"' not in await (await client.get(path)).text()


async def test_a_filter_page_needs_a_filter_id(client: Any, runtime: Runtime) -> None:
    _, headers = await signed_in(runtime)
    assert (await client.get("/filters/not-an-id", headers=headers)).status == 404


async def test_the_qr_code_shows_only_the_enrolment_under_way(
    client: Any, runtime: Runtime
) -> None:
    assert (await client.get(QR)).status == 404
    _, headers = await signed_in(runtime)
    assert (await client.get(QR, headers=headers)).status == 404

    setup = await client.post("/api/auth/totp/setup", json={}, headers=headers)
    assert setup.status == 200
    secret = (await setup.json())["secret"]
    drawn = await client.get(QR, headers=headers)
    assert drawn.status == 200
    assert drawn.content_type == "image/svg+xml"
    # Never cached, never embedded by another origin.
    assert drawn.headers["Cache-Control"] == "no-store"
    assert drawn.headers["Cross-Origin-Resource-Policy"] == "same-origin"
    svg = await drawn.text()
    assert svg.startswith("<svg") and "<script" not in svg and "<style" not in svg
    assert secret not in svg  # the secret is in the picture, not in its text

    # Another account's session sees no code.
    _, other = await signed_in(runtime, email_address="other@example.com")
    assert (await client.get(QR, headers=other)).status == 404

    code = pyotp.TOTP(secret).at(runtime.clock.now())
    enabled = await client.post("/api/auth/totp/enable", json={"code": code}, headers=headers)
    assert enabled.status == 200, await enabled.text()
    assert (await client.get(QR, headers=headers)).status == 404


async def test_the_oauth_apps_screen_is_the_instance_owner_s_alone(
    client: Any, runtime: Runtime
) -> None:
    _, owner = await signed_in(runtime, is_owner=True)
    _, member = await signed_in(runtime)
    page = await client.get("/oauth-clients", headers=owner)
    assert page.status == 200
    html = await page.text()
    assert '<a href="/oauth-clients" aria-current="page">OAuth apps</a>' in html
    # Another account neither sees the section nor opens it (the admin API
    # refuses it too: /admin/oauth/clients answers 403).
    elsewhere = await (await client.get("/", headers=member)).text()
    assert "/oauth-clients" not in elsewhere
    refused = await client.get("/oauth-clients", headers=member)
    assert refused.status == 403
    assert "Only the instance owner" in await refused.text()
    assert (await client.get("/admin/oauth/clients", headers=member)).status == 403
