"""A person starts a transfer from a real Dovecot, watches it progress, and cancels another."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator

import psycopg2
import pytest

from tests.browser.conftest import Screens, start_gateway
from tests.browser.helpers import make_account, sign_in
from tests.conftest import GatewayProcess
from tests.mail.imap_server import ImapServer
from tests.mail.transfer_fixtures import SOURCE_PASSWORD, dovecot, message, seed_bulk

PERSON = "mover@example.com"


@pytest.fixture(scope="module")
def imap() -> Iterator[ImapServer]:
    yield from dovecot()


@pytest.fixture
def gateway(gateway_process: Callable[..., GatewayProcess], database_url: str) -> GatewayProcess:
    # Loopback sources allowed: the Dovecot here.
    return start_gateway(gateway_process, database_url, TRANSFER_ALLOW_PRIVATE="true")


def make_addresses(database_url: str, email: str, local_parts: list[str]) -> None:
    """A domain of the account with addresses (their own screens belong to other issues)."""
    with psycopg2.connect(database_url) as conn, conn.cursor() as cur:
        cur.execute("SELECT id FROM mail.accounts WHERE email = %s", (email,))
        (account_id,) = cur.fetchone()
        cur.execute(
            "INSERT INTO mail.domains (account_id, name, created_at, updated_at)"
            " VALUES (%s, %s, now(), now()) RETURNING id",
            (account_id, f"d{os.urandom(3).hex()}.example"),
        )
        (domain_id,) = cur.fetchone()
        for local in local_parts:
            cur.execute(
                "INSERT INTO mail.addresses (domain_id, local_part, password_hash, created_at,"
                " updated_at) VALUES (%s, %s, 'x', now(), now())",
                (domain_id, local),
            )
    conn.close()


def test_start_watch_and_cancel_transfers(
    screens: Callable[[], Screens], gateway: GatewayProcess, imap: ImapServer, database_url: str
) -> None:
    imap.add_user("mover", SOURCE_PASSWORD)
    for n in range(5):
        imap.append("mover", "INBOX", message(f"hello {n}"), flags="\\Seen")
    imap.append("mover", "Gesendet", message("sent"))
    seed_bulk(imap, "slow", 1500)
    make_account(gateway.base_url, PERSON)
    make_addresses(database_url, PERSON, ["ann", "bob"])

    tab = screens()
    page = tab.page
    page.goto("/transfers")
    sign_in(tab, PERSON)
    page.wait_for_url("**/transfers")
    page.get_by_text("No transfers yet.").wait_for()
    tab.check("transfers-empty")

    # A mistake is said next to the form.
    page.get_by_label("Into the address").select_option(index=0)  # ann@, listed first
    page.get_by_label("IMAP server").fill("imap.example.org")
    page.get_by_label("Security").select_option("none")
    page.get_by_label("Username on that server").fill("mover")
    page.get_by_label("Password on that server").fill(SOURCE_PASSWORD)
    page.get_by_role("button", name="Start the transfer").click()
    page.get_by_role("alert").filter(has_text="loopback").wait_for()
    tab.check("transfers-error")

    page.get_by_label("IMAP server").fill(imap.host)
    page.get_by_label("Port").fill(str(imap.port))
    page.get_by_role("button", name="Start the transfer").click()
    page.wait_for_url(re.compile(r"/transfers/[0-9a-f-]{36}$"))
    page.get_by_text("Completed").wait_for()
    page.get_by_text("6 of 6 messages").wait_for()
    assert page.get_by_role("button", name="Cancel the transfer").is_hidden()
    tab.check("transfer-completed")

    # A long one: the page shows it moving, and cancelling stops it.
    page.goto("/transfers")
    page.get_by_label("Into the address").select_option(index=1)  # bob@
    page.get_by_label("IMAP server").fill(imap.host)
    page.get_by_label("Security").select_option("none")
    page.get_by_label("Port").fill(str(imap.port))
    page.get_by_label("Username on that server").fill("slow")
    page.get_by_label("Password on that server").fill(SOURCE_PASSWORD)
    page.get_by_role("button", name="Start the transfer").click()
    page.wait_for_url(re.compile(r"/transfers/[0-9a-f-]{36}$"))
    page.get_by_text("Running").wait_for()
    # Counting 1,500 messages and starting takes a few seconds on a quiet
    # machine and took over 30 s once on a loaded CI one (load average 10 on
    # 2 cores); the page polls, so waiting longer only waits.
    page.get_by_text(re.compile(r"^[1-9][0-9]* of 1500$")).first.wait_for(timeout=120_000)
    page.get_by_role("button", name="Cancel the transfer").click()
    page.get_by_text("Cancelled").wait_for()
    assert page.get_by_role("button", name="Cancel the transfer").is_hidden()
    tab.check("transfer-cancelled")

    page.get_by_role("link", name="All transfers").click()
    page.wait_for_url("**/transfers")
    rows = page.locator("#transfers tbody tr")
    rows.nth(1).wait_for()
    assert rows.count() == 2
    assert "Cancelled" in rows.nth(0).inner_text()
    assert "Done" in rows.nth(1).inner_text()
    tab.check("transfers-list")
