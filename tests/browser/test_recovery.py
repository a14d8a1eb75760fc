"""The public recovery page: a mailbox owner asks for a link, and sets a new password from it."""

from __future__ import annotations

from collections.abc import Callable

import psycopg2
from playwright.sync_api import expect

from common.passwords import verify_password_sync
from tests.browser.conftest import Screens
from tests.browser.helpers import mailed_link, signed_in_tab
from tests.conftest import GatewayProcess

RECOVERY = "ann.private@elsewhere.example"
NEW_PASSWORD = "a fresh mailbox passphrase"


def stored_hash(database_url: str, local_part: str) -> str:
    with psycopg2.connect(database_url) as conn, conn.cursor() as cur:
        cur.execute("SELECT password_hash FROM mail.addresses WHERE local_part = %s", (local_part,))
        row = cur.fetchone()
    conn.close()
    assert row is not None
    return str(row[0])


def test_a_mailbox_owner_resets_the_password_from_the_emailed_link(
    screens: Callable[[], Screens], gateway: GatewayProcess, database_url: str
) -> None:
    # The panel's user makes the mailbox and names its recovery address.
    admin = signed_in_tab(screens, gateway.base_url, "admin@example.com")
    made = admin.page.request.post("/api/domains", data={"name": "rescue.example"})
    assert made.status == 201
    address = admin.page.request.post(
        f"/api/domains/{made.json()['id']}/addresses",
        data={"local_part": "ann", "password": "the first passphrase", "recovery_email": RECOVERY},
    )
    assert address.status == 201

    # The mailbox owner, signed out, on the public page.
    tab = screens()
    page = tab.page
    page.goto("/recover")
    tab.check("recover-request")
    page.get_by_label("Mailbox address").fill("ann@rescue.example")
    page.get_by_role("button", name="Send the link").click()
    message = page.locator("#request-status")
    expect(message).to_contain_text("If this mailbox has a recovery address")
    tab.check("recover-requested")
    # An unknown mailbox gets the very same words.
    page.goto("/recover")
    page.get_by_label("Mailbox address").fill("nobody@rescue.example")
    page.get_by_role("button", name="Send the link").click()
    expect(page.locator("#request-status")).to_contain_text(
        "If this mailbox has a recovery address"
    )

    link = mailed_link(gateway, "mailbox_recovery", RECOVERY)
    assert "/recover?token=" in link
    page.goto(link)
    page.get_by_label("New mailbox password").wait_for()
    tab.check("recover-reset")
    page.get_by_label("New mailbox password").fill("short")
    page.get_by_role("button", name="Set the password").click()
    expect(page.locator("#reset-error")).to_contain_text("at least 8 characters")
    tab.check("recover-reset-error")
    page.get_by_label("New mailbox password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Set the password").click()
    expect(page.locator("#reset-status")).to_contain_text("ann@rescue.example is set")
    tab.check("recover-done")
    assert verify_password_sync(stored_hash(database_url, "ann"), NEW_PASSWORD)

    # The link works once.
    page.goto(link)
    page.get_by_label("New mailbox password").fill("yet another passphrase")
    page.get_by_role("button", name="Set the password").click()
    expect(page.locator("#reset-error")).to_contain_text("invalid, used or expired")
    assert verify_password_sync(stored_hash(database_url, "ann"), NEW_PASSWORD)
