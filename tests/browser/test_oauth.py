"""OAuth in the browser: the consent page (/authorize) and device pairing (/pair).

The clients are Authlib's; the person is a browser that signs in on the way.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import httpx
from authlib.common.security import generate_token
from authlib.deprecate import AuthlibDeprecationWarning

from tests.browser.conftest import Screens
from tests.browser.helpers import (
    fulfil_callback,
    go_to_section,
    insert_client,
    make_account,
    sign_in,
    signed_in_tab,
)
from tests.conftest import GatewayProcess

with warnings.catch_warnings():
    warnings.simplefilter("ignore", AuthlibDeprecationWarning)
    from authlib.integrations.httpx_client import OAuth2Client

CLIENT_ORIGIN = "https://photos.example"
REDIRECT_URI = CLIENT_ORIGIN + "/callback"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
EMAIL = "person@example.com"


def metadata(gateway: GatewayProcess) -> dict[str, Any]:
    document = httpx.get(gateway.base_url + "/.well-known/oauth-authorization-server/oauth")
    return document.json()  # type: ignore[no-any-return]


def test_an_authlib_client_gets_a_code_through_the_consent_page(
    screens: Callable[[], Screens], gateway: GatewayProcess, database_url: str
) -> None:
    make_account(gateway.base_url, EMAIL)
    insert_client(database_url, "photos", "Photo Printer", REDIRECT_URI)
    meta = metadata(gateway)
    # The advertised endpoint is this page.
    assert meta["authorization_endpoint"] == gateway.base_url + "/authorize"
    verifier = generate_token(48)
    client = OAuth2Client(
        client_id="photos",
        token_endpoint_auth_method="none",
        redirect_uri=REDIRECT_URI,
        scope="openid email",
        code_challenge_method="S256",
    )
    url, state = client.create_authorization_url(
        meta["authorization_endpoint"], code_verifier=verifier
    )

    tab = screens()
    page = tab.page
    seen = fulfil_callback(tab, CLIENT_ORIGIN)
    page.goto(url)
    # Signed out: sign in first, then back to the very same request.
    page.wait_for_url(lambda url: "/signin?next=" in url)
    sign_in(tab, EMAIL, check_as="signin")
    page.wait_for_url(lambda url: "/authorize?" in url)
    page.get_by_text("Photo Printer").wait_for()
    page.get_by_text("See your email address").wait_for()
    assert page.get_by_role("button", name="Allow").evaluate("el => el === document.activeElement")
    tab.check("consent")
    # Keyboard only: the focused Allow button takes Enter.
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url.startswith(REDIRECT_URI + "?"))

    assert len(seen) == 1
    token = client.fetch_token(
        meta["token_endpoint"], authorization_response=seen[0], code_verifier=verifier
    )
    assert token["token_type"].lower() == "bearer"
    assert token["access_token"]
    assert set(token["scope"].split()) == {"openid", "email"}
    assert state in seen[0]

    # Asked again and denied: the client hears access_denied at its redirect URI.
    url, _ = client.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier)
    page.goto(url)
    page.get_by_role("button", name="Deny").click()
    page.wait_for_url(lambda url: url.startswith(REDIRECT_URI + "?"))
    assert "error=access_denied" in seen[-1]


def test_a_request_for_an_unknown_redirect_uri_stays_on_the_page(
    screens: Callable[[], Screens], gateway: GatewayProcess, database_url: str
) -> None:
    make_account(gateway.base_url, EMAIL)
    insert_client(database_url, "photos", "Photo Printer", REDIRECT_URI)
    tab = screens()
    page = tab.page
    page.goto("/signin")
    sign_in(tab, EMAIL)
    page.wait_for_url(tab.origin + "/")
    # Not the client's redirect URI: the browser must not be sent there.
    page.goto(
        "/authorize?response_type=code&client_id=photos&redirect_uri=https://evil.example/cb"
        "&code_challenge=" + "a" * 43 + "&code_challenge_method=S256"
    )
    page.get_by_role("alert").filter(has_text="cannot be completed").wait_for()
    assert page.url.startswith(tab.origin + "/authorize?")
    assert page.get_by_role("button", name="Allow").is_hidden()
    tab.check("consent-error")


def poll_for_token(
    token_endpoint: str, device_code: str, interval: int, out: dict[str, Any]
) -> None:
    """The device: polls the token endpoint at the interval it was given (slow_down adds 5 s)."""
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        answer = httpx.post(
            token_endpoint,
            data={"grant_type": DEVICE_GRANT, "device_code": device_code, "client_id": "tv"},
        ).json()
        out.setdefault("answers", []).append(answer.get("error", "token"))
        if "access_token" in answer or answer.get("error") not in (
            "authorization_pending",
            "slow_down",
        ):
            out["final"] = answer
            return
        if answer.get("error") == "slow_down":
            interval += 5
        time.sleep(interval)


def test_a_device_polls_while_the_person_approves_at_pair(
    screens: Callable[[], Screens], gateway: GatewayProcess, database_url: str
) -> None:
    make_account(gateway.base_url, EMAIL)
    insert_client(database_url, "tv", "Living Room TV", "https://tv.example/cb")
    meta = metadata(gateway)
    started = httpx.post(
        meta["device_authorization_endpoint"], data={"client_id": "tv", "scope": "openid"}
    ).json()
    assert started["verification_uri"] == gateway.base_url + "/pair"
    result: dict[str, Any] = {}
    device = threading.Thread(
        target=poll_for_token,
        args=(meta["token_endpoint"], started["device_code"], started["interval"], result),
    )
    device.start()

    tab = screens()
    page = tab.page
    # The person types the address the device shows, signs in, then types the code.
    page.goto(started["verification_uri"])
    sign_in(tab, EMAIL)
    page.wait_for_url("**/pair")
    tab.check("pair")
    page.get_by_label("Code shown on your device").fill("WRONG-CODE")
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("alert").filter(has_text="code").wait_for()
    # The error is tied to the field, so a screen reader reads it with the input.
    code = page.get_by_label("Code shown on your device")
    assert code.get_attribute("aria-invalid") == "true"
    assert "pair-error" in (code.get_attribute("aria-describedby") or "")
    tab.check("pair-error")
    page.get_by_label("Code shown on your device").fill(started["user_code"].lower())
    page.get_by_role("button", name="Continue").click()
    page.get_by_text("Living Room TV").wait_for()
    tab.check("pair-confirm")
    page.get_by_role("button", name="Allow").click()
    page.get_by_text("Your device is connected").wait_for()
    tab.check("pair-done")

    device.join(timeout=45)
    assert result["final"].get("access_token"), result
    assert result["answers"][0] == "authorization_pending"

    # A second device, its code in the link: the page looks it up; the person denies.
    second = httpx.post(
        meta["device_authorization_endpoint"], data={"client_id": "tv", "scope": "openid"}
    ).json()
    refused: dict[str, Any] = {}
    device = threading.Thread(
        target=poll_for_token,
        args=(meta["token_endpoint"], second["device_code"], second["interval"], refused),
    )
    device.start()
    page.goto(second["verification_uri_complete"])
    page.get_by_text(second["user_code"]).wait_for()
    page.get_by_role("button", name="Deny").click()
    page.get_by_text("The device was not connected").wait_for()
    device.join(timeout=45)
    assert refused["final"].get("error") == "access_denied", refused


def token_error(gateway: GatewayProcess, client_id: str, secret: str) -> str:
    """What the token endpoint says to a made-up code: invalid_grant once the
    client has authenticated, invalid_client when its secret is wrong."""
    answer = httpx.post(
        metadata(gateway)["token_endpoint"],
        data={
            "grant_type": "authorization_code",
            "code": "nope",
            "code_verifier": "a" * 43,
            "redirect_uri": REDIRECT_URI,
        },
        auth=(client_id, secret),
    )
    return str(answer.json()["error"])


def test_the_owner_registers_edits_rotates_and_revokes_an_app(
    screens: Callable[[], Screens], gateway: GatewayProcess
) -> None:
    # The first account is the instance owner.
    tab = signed_in_tab(screens, gateway.base_url, "owner@example.com")
    page = tab.page
    page.on("dialog", lambda dialog: dialog.accept())
    go_to_section(page, "OAuth apps")
    page.wait_for_url("**/oauth-clients")
    page.get_by_text("No apps registered yet.").wait_for()
    tab.check("oauth-clients-empty")

    create = page.locator("#create-client")
    create.get_by_label("Name").fill("Photo Printer")
    create.get_by_label("Redirect URIs").fill("not a uri")
    create.get_by_role("button", name="Register app").click()
    # The server's reason, tied to the field it names; nothing was registered.
    uris = create.get_by_label("Redirect URIs")
    page.locator("#create-error").filter(has_text="redirect_uris").wait_for()
    assert uris.get_attribute("aria-invalid") == "true"
    assert page.get_by_text("No apps registered yet.").is_visible()
    tab.check("oauth-clients-error")

    uris.fill(f"{REDIRECT_URI}\n\nhttps://photos.example/again\n")
    create.get_by_label("email").check()
    create.get_by_role("button", name="Register app").click()
    page.get_by_role("heading", name="Client secret").wait_for()
    secret = page.locator("#secret").input_value()
    client_id = page.locator("#secret-client-id").inner_text()
    row = page.get_by_role("row").filter(has_text="Photo Printer")
    row.get_by_text(client_id).wait_for()
    assert "https://photos.example/again" in row.inner_text()
    tab.check("oauth-clients-created")
    assert token_error(gateway, client_id, secret) == "invalid_grant"
    assert token_error(gateway, client_id, secret + "x") == "invalid_client"

    # Edit: a redirect URI replaced, the scopes changed, through PATCH.
    page.get_by_role("button", name="Edit Photo Printer").click()
    edit = page.locator("#edit-client")
    edit.get_by_label("Redirect URIs").fill("https://photos.example/new-callback")
    edit.get_by_label("Name").fill("Photo Printer Pro")
    tab.check("oauth-clients-edit")
    edit.get_by_role("button", name="Save changes").click()
    page.get_by_role("status").filter(has_text="Photo Printer Pro was saved").wait_for()
    row = page.get_by_role("row").filter(has_text="Photo Printer Pro")
    row.get_by_text("https://photos.example/new-callback").wait_for()
    assert REDIRECT_URI not in row.inner_text()

    # Rotate: a new secret, shown once; the old one stops working at once.
    page.get_by_role("button", name="Rotate the secret of Photo Printer Pro").click()
    page.wait_for_function("old => document.getElementById('secret').value !== old", arg=secret)
    rotated = page.locator("#secret").input_value()
    assert token_error(gateway, client_id, secret) == "invalid_client"
    assert token_error(gateway, client_id, rotated) == "invalid_grant"

    # Revoke: listed as revoked, with no actions left; the app can no longer authenticate.
    page.get_by_role("button", name="Revoke Photo Printer Pro").click()
    page.get_by_role("status").filter(has_text="was revoked").wait_for()
    row.get_by_text("revoked").wait_for()
    assert row.get_by_role("button").count() == 0
    assert token_error(gateway, client_id, rotated) == "invalid_client"
    tab.check("oauth-clients-revoked")

    # Another account sees neither the section nor the screen.
    other = signed_in_tab(screens, gateway.base_url, "member@example.com")
    assert other.page.get_by_role("link", name="OAuth apps", include_hidden=True).count() == 0
    other.page.goto("/oauth-clients")
    other.page.get_by_role("heading", name="Only the instance owner can do this").wait_for()
