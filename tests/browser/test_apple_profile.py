"""The "Set up on iPhone, iPad or Mac" downloads: the panel's address screen and webmail's help."""

from __future__ import annotations

import plistlib
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg2

from tests.browser.conftest import Screens
from tests.browser.helpers import PASSWORD, insert_address, make_account, sign_in
from tests.conftest import GatewayProcess
from tests.mail.factories import PASSWORD as MAILBOX_PASSWORD
from tests.mail.factories import PASSWORD_HASH

OWNER = "owner@example.org"
ADDRESS = "ann@apple-profile.test"
LINK = "Set up on iPhone, iPad or Mac"


def add_address(database_url: str, owner: str, email: str) -> str:
    """A domain and an address (with the factories' mailbox password) for the owner's account."""
    with psycopg2.connect(database_url) as conn, conn.cursor() as cur:
        cur.execute("SELECT id FROM mail.accounts WHERE email = %s", (owner,))
        account_id = cur.fetchone()[0]  # type: ignore[index]
        address_id = insert_address(cur, account_id, email, PASSWORD_HASH, "Ann Lee")
    conn.close()
    return address_id


def downloaded_profile(page: Any, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    """Click the link; the file's suggested name and its plist."""
    with page.expect_download() as info:
        page.get_by_role("link", name=LINK).click()
    download = info.value
    path = tmp_path / secrets.token_hex(4)
    download.save_as(str(path))
    return download.suggested_filename, plistlib.loads(path.read_bytes())


def test_the_profile_downloads_from_the_address_screen_and_from_webmail(
    screens: Callable[[], Screens], gateway: GatewayProcess, database_url: str, tmp_path: Path
) -> None:
    make_account(gateway.base_url, OWNER)
    address_id = add_address(database_url, OWNER, ADDRESS)

    tab = screens()
    page = tab.page
    page.goto(f"/addresses/{address_id}")
    sign_in(tab, OWNER, password=PASSWORD)
    page.wait_for_url(f"{tab.origin}/addresses/{address_id}")
    page.get_by_role("link", name=LINK).wait_for()
    # Beside the mail app settings it stands in for.
    assert page.locator("#clients").get_by_role("link", name=LINK).count() == 1
    tab.check("address-apple-profile")
    name, profile = downloaded_profile(page, tmp_path)
    assert name == f"{ADDRESS}.mobileconfig"
    [account] = profile["PayloadContent"]
    assert account["PayloadType"] == "com.apple.mail.managed"
    assert account["EmailAddress"] == ADDRESS
    assert account["EmailAccountName"] == "Ann Lee"
    # The servers the screen's table shows for reading and sending.
    rows = {
        tuple(r.locator("th, td").all_inner_texts()[::3])
        for r in page.locator("#clients tbody tr").all()
    }
    assert ("IMAP", str(account["IncomingMailServerPortNumber"])) in rows
    assert ("SMTP", str(account["OutgoingMailServerPortNumber"])) in rows

    # The mailbox's own, from webmail's help.
    tab = screens()
    page = tab.page
    page.goto("/webmail")
    page.get_by_label("Email address").fill(ADDRESS)
    page.get_by_label("Password").fill(MAILBOX_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Help").click()
    dialog = page.get_by_role("dialog", name="Help")
    dialog.wait_for()
    assert dialog.get_by_role("link", name=LINK).is_visible()
    tab.check("webmail-help")
    name, profile = downloaded_profile(page, tmp_path)
    assert name == f"{ADDRESS}.mobileconfig"
    assert profile["PayloadContent"][0]["EmailAddress"] == ADDRESS
