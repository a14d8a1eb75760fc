"""The owner adds a domain, reads and checks its DNS records, publishes them with a
one-time token, rotates DKIM, exports the zone, then creates an address and looks after it."""

from __future__ import annotations

import re
import smtplib
from collections.abc import Callable
from email.message import EmailMessage
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from tests.browser.conftest import Screens
from tests.browser.helpers import PASSWORD, go_to_section
from tests.browser.hosting import StandIns, stand_ins  # noqa: F401
from tests.conftest import GatewayProcess, free_port
from tests.mail.hosting_fixtures import CLOUDFLARE_TOKEN, MAIL_HOSTNAME

OWNER = "owner@example.org"
DOMAIN = "example.com"


@pytest.fixture
def gateway_env(stand_ins: StandIns) -> dict[str, str]:  # noqa: F811
    # The gateway's SMTP daemon too, so mail really arrives in the folders shown.
    return {**stand_ins.env, "SMTP_PORT": str(free_port())}


def sign_up_owner(tab: Screens) -> None:
    page = tab.page
    page.goto("/domains")
    assert page.url == tab.origin + "/signin?next=/domains"
    page.get_by_role("link", name="Create an account").click()
    page.get_by_label("Email").fill(OWNER)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url(tab.origin + "/domains")


def record_row(page: Any, purpose: str) -> Any:
    return page.locator(f'#dns tr[data-purpose="{purpose}"]')


def test_the_owner_adds_a_domain_checks_publishes_and_exports_its_records(
    screens: Callable[[], Screens],
    stand_ins: StandIns,  # noqa: F811
    gateway: GatewayProcess,
) -> None:
    tab = screens()
    page = tab.page
    sign_up_owner(tab)
    page.get_by_text("No domains yet").wait_for()
    tab.check("domains-empty")

    # A name that is not a domain is refused next to its field.
    page.get_by_label("Domain name").fill("localhost")
    page.get_by_role("button", name="Add domain").click()
    error = page.get_by_role("alert").filter(has_text="two labels")
    error.wait_for()
    name_field = page.get_by_label("Domain name")
    assert name_field.get_attribute("aria-invalid") == "true"
    assert "domain-add-error" in (name_field.get_attribute("aria-describedby") or "")
    assert name_field.evaluate("el => el === document.activeElement")
    tab.check("domains-add-error")

    name_field.fill(DOMAIN)
    page.get_by_role("button", name="Add domain").click()
    page.wait_for_url(re.compile(r"/domains/[0-9a-f-]{36}$"))
    domain_id = page.url.rsplit("/", 1)[1]
    page.get_by_role("heading", name=DOMAIN, exact=True).wait_for()
    # Every record the API asks for is on the page, none checked yet.
    records = page.request.get(f"/api/domains/{domain_id}/dns").json()["records"]
    # The mail records, then an SRV record for every listener that is on
    # (submission, IMAP, POP3, ManageSieve, JMAP): tests/mail/test_dns_routes.py names them.
    assert page.locator("#dns tbody tr").count() == len(records) == 17
    mx = record_row(page, "mx")
    assert f"10 {MAIL_HOSTNAME}." in mx.inner_text()
    assert "Not checked" in mx.inner_text()

    # The DNS host is Cloudflare, found from the nameservers.
    stand_ins.dns.add(DOMAIN, "NS", "ada.ns.cloudflare.com.", "bob.ns.cloudflare.com.")
    page.reload()
    page.get_by_text("DNS is hosted at Cloudflare").wait_for()
    tab.check("domain")

    # Everything but DMARC is published: check now says which.
    stand_ins.publish([r for r in records if r["purpose"] != "dmarc"])
    page.get_by_role("button", name="Check DNS now").click()
    status = page.locator("#dns-status")
    status.filter(has_text=f"{len(records) - 1} of {len(records)} records verified").wait_for()
    assert status.evaluate("el => el === document.activeElement")
    assert "Verified" in record_row(page, "mx").inner_text()
    assert "Missing" in record_row(page, "dmarc").inner_text()
    assert "Incomplete" in page.locator("#summary").inner_text()
    tab.check("domain-checked")

    # A value copies to the clipboard in one press.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    copy = record_row(page, "mx").get_by_role("button", name="Copy the MX value")
    copy.click()
    copy.filter(has_text="Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == f"10 {MAIL_HOSTNAME}."

    # A stricter DMARC policy changes the record to publish at once.
    page.get_by_label("DMARC policy for mail that fails checks").select_option("reject")
    page.get_by_role("button", name="Save settings").click()
    page.locator("#settings-status").filter(has_text="Saved").wait_for()
    assert "v=DMARC1; p=reject" in record_row(page, "dmarc").inner_text()

    # Publishing: a wrong token is Cloudflare's refusal, said at the field, and gone from it.
    zone = stand_ins.cloudflare.add_zone(DOMAIN)
    # An MX of another host is already there: it is reported, never overwritten.
    stand_ins.cloudflare.add_record(
        zone, type="MX", name=DOMAIN, content="mx.elsewhere.test", priority=10
    )
    token = page.get_by_label("API token")
    token.fill("not-the-token")
    page.get_by_role("button", name="Publish missing records").click()
    page.get_by_role("alert").filter(has_text="refused the API token").wait_for()
    assert token.input_value() == ""
    token.fill(CLOUDFLARE_TOKEN)
    page.get_by_role("button", name="Publish missing records").click()
    result = page.locator("#publish-result")
    result.get_by_text(
        f"Published in {DOMAIN} at Cloudflare: {len(records) - 1} created, 0 already there,"
        " 1 with another value."
    ).wait_for()
    result.get_by_text("Left alone: another value is published").wait_for()
    assert result.locator("ul").last.inner_text() == f"MX {DOMAIN}"
    assert result.evaluate("el => el === document.activeElement")
    # The token was used once: not in the field, not anywhere in the page.
    assert token.input_value() == ""
    assert CLOUDFLARE_TOKEN not in page.content()
    kept = page.evaluate("JSON.stringify([location.href, {...localStorage}, {...sessionStorage}])")
    assert CLOUDFLARE_TOKEN not in kept
    assert CLOUDFLARE_TOKEN not in gateway.log()
    assert len(stand_ins.cloudflare.created) == len(records) - 1
    tab.check("domain-published")

    # DKIM: the Ed25519 standby key becomes the signing key; the RSA one becomes standby.
    keys = page.request.get(f"/api/domains/{domain_id}/keys").json()["data"]
    ed = next(k for k in keys if k["algorithm"] == "ed25519-sha256")
    page.get_by_role("button", name=f"Activate key {ed['selector']}").click()
    page.locator("#keys-status").filter(has_text=f"{ed['selector']} now signs mail").wait_for()
    row = page.locator(f'#keys tr[data-key="{ed["id"]}"]')
    assert "Signing" in row.inner_text()
    assert (
        page.locator("#keys").get_by_role("button", name=re.compile("^Activate key")).count() == 1
    )
    assert [
        k["id"]
        for k in page.request.get(f"/api/domains/{domain_id}/keys").json()["data"]
        if k["active"]
    ] == [ed["id"]]

    # A new standby key: its record joins the set at once, unchecked.
    page.get_by_label("New key's algorithm").select_option("rsa-sha256")
    page.get_by_role("button", name="Generate a standby key").click()
    page.locator("#keys-status").filter(has_text="New standby key").wait_for()
    assert page.locator("#keys tbody tr").count() == 3
    assert page.locator('#dns tr[data-purpose="dkim"]').count() == 3
    tab.check("domain-keys")

    # The zone file downloads from a plain link.
    with page.expect_download() as download:
        page.get_by_role("link", name="Download zone file").click()
    assert download.value.suggested_filename == f"{DOMAIN}.zone"
    text = Path(download.value.path()).read_text()
    assert f"$ORIGIN {DOMAIN}." in text
    assert all(k["selector"] in text for k in keys)

    # A second domain falls back to this one.
    other = page.request.post("/api/domains", data={"name": "example.net"}).json()
    page.goto(f"/domains/{other['id']}")
    page.get_by_label(re.compile("goes to the same address at")).select_option(label=DOMAIN)
    page.get_by_role("button", name="Save fallback").click()
    page.get_by_text(f"Saved: unknown addresses go to {DOMAIN}.").wait_for()
    assert DOMAIN in page.locator("#summary").inner_text()

    # The list searches and sorts through the API as you type.
    go_to_section(page, "Domains")
    page.wait_for_url(tab.origin + "/domains")
    assert page.locator("#domains-rows tr").count() == 2
    page.get_by_role("searchbox", name="Search").fill(".net")
    page.locator("#domains-count").filter(has_text="1 domain matching").wait_for()
    assert page.locator("#domains-rows").inner_text().strip().startswith("example.net")
    assert "search=.net" in page.url
    page.get_by_role("searchbox", name="Search").fill("")
    page.get_by_label("Sort by").select_option("name")
    page.get_by_label("Order").select_option("asc")
    page.locator("#domains-count").filter(has_text="2 domains").wait_for()
    page.wait_for_function(
        "() => document.querySelector('#domains-rows a').textContent === 'example.com'"
    )
    tab.check("domains")

    # Deleting the second domain asks for its name first.
    page.goto(f"/domains/{other['id']}")
    page.get_by_label("Type example.net to confirm").fill("example.com")
    page.get_by_role("button", name="Delete domain").click()
    page.get_by_role("alert").filter(has_text="Type example.net").wait_for()
    page.get_by_label("Type example.net to confirm").fill("example.net")
    page.get_by_role("button", name="Delete domain").click()
    page.wait_for_url(tab.origin + "/domains")
    assert page.locator("#domains-rows tr").count() == 1


def test_the_owner_creates_an_address_sets_its_password_and_sees_its_folders(
    screens: Callable[[], Screens], browser: Any, gateway: GatewayProcess
) -> None:
    tab = screens()
    page = tab.page
    sign_up_owner(tab)
    domain = page.request.post("/api/domains", data={"name": DOMAIN}).json()
    page.goto(f"/domains/{domain['id']}")
    page.get_by_role("link", name=re.compile("^Addresses")).first.click()
    page.wait_for_url(f"**/domains/{domain['id']}/addresses")
    page.get_by_text("No addresses yet").wait_for()
    tab.check("addresses-empty")

    # A sub-address is refused at its field.
    page.get_by_label("Address", exact=True).fill("ann+news")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Create address").click()
    page.get_by_role("alert").filter(has_text="sub-address").wait_for()
    assert page.get_by_label("Address", exact=True).get_attribute("aria-invalid") == "true"

    page.get_by_label("Address", exact=True).fill("ann")
    page.get_by_label("Name (optional)").fill("Ann Example")
    page.get_by_label("Quota in MiB").fill("512")
    page.get_by_role("button", name="Create address").click()
    page.wait_for_url(re.compile(r"/addresses/[0-9a-f-]{36}$"))
    address_id = page.url.rsplit("/", 1)[1]
    page.get_by_role("heading", name=f"ann@{DOMAIN}").wait_for()
    assert "512 MiB" in page.locator("#summary").inner_text()
    folders = page.locator("#folders tbody th").all_inner_texts()
    assert folders == ["Inbox", "Drafts", "Sent", "Archive", "Junk", "Trash"]
    assert page.get_by_text("Nothing yet").is_visible()
    # The mail app settings, as autoconfig tells them (the registered ports: the
    # harness's listeners are on ports picked at start).
    rows = [r.locator("th, td").all_inner_texts() for r in page.locator("#clients tbody tr").all()]
    assert [(r[0], r[3], r[4]) for r in rows] == [
        ("IMAP", "993", "SSL/TLS"),
        ("IMAP", "143", "STARTTLS"),
        ("POP3", "995", "SSL/TLS"),
        ("POP3", "110", "STARTTLS"),
        ("SMTP", gateway.env["SUBMISSION_PORT"], "STARTTLS"),
        ("ManageSieve", "4190", "STARTTLS"),
    ]

    # A message arrives over SMTP: the Inbox counts it and the activity logs it.
    message = EmailMessage()
    message["From"] = "bob@sender.test"
    message["To"] = f"ann@{DOMAIN}"
    message["Subject"] = "Lunch on Friday?"
    message.set_content("Shall we?")
    with smtplib.SMTP("127.0.0.1", int(gateway.env["SMTP_PORT"]), timeout=10) as smtp:
        smtp.send_message(message)
    page.reload()
    inbox = page.locator("#folders tbody tr").first
    assert inbox.locator("td").all_inner_texts() == ["1", "1"]
    entry = page.locator("#activity tbody tr").first
    assert "Received" in entry.inner_text() and "Lunch on Friday?" in entry.inner_text()
    assert "1 message" in page.locator("#summary").inner_text()
    tab.check("address")

    # A new password: the mailbox signs in with it (the API checks it as submission would).
    page.get_by_label("New password").fill("short")
    page.get_by_role("button", name="Set password").click()
    page.get_by_role("alert").filter(has_text="at least").wait_for()
    page.get_by_label("New password").fill("a brand new mailbox passphrase")
    page.get_by_role("button", name="Set password").click()
    status = page.locator("#password-status")
    status.filter(has_text="Password set").wait_for()
    assert status.evaluate("el => el === document.activeElement")
    assert page.get_by_label("New password").input_value() == ""

    # Recovery address and quota show in the summary at once.
    page.get_by_label("Send password resets to").fill("ann.recovery@example.org")
    page.get_by_role("button", name="Save recovery address").click()
    page.locator("#recovery-status").filter(has_text="ann.recovery@example.org").wait_for()
    assert "ann.recovery@example.org" in page.locator("#summary").inner_text()
    page.locator("#details-quota").fill("0")
    page.get_by_role("button", name="Save", exact=True).click()
    page.locator("#details-status").filter(has_text="Saved").wait_for()
    assert "Unlimited" in page.locator("#summary").inner_text()
    body = page.request.get(f"/api/addresses/{address_id}").json()
    assert (body["quota_bytes"], body["recovery_email"]) == (0, "ann.recovery@example.org")
    tab.check("address-saved")

    # More addresses: the list pages and searches through the API.
    for local in ("bob", "cy", "dee"):
        made = page.request.post(
            f"/api/domains/{domain['id']}/addresses",
            data={"local_part": local, "password": PASSWORD},
        )
        assert made.ok, made.text()
    page.goto(f"/domains/{domain['id']}/addresses")
    assert page.locator("#addresses-rows tr").count() == 4
    page.get_by_role("searchbox", name="Search").fill("de")
    page.locator("#addresses-count").filter(has_text="1 address matching").wait_for()
    assert page.locator("#addresses-rows a").all_inner_texts() == [f"dee@{DOMAIN}"]
    tab.check("addresses")

    # Twelve addresses are two pages of ten; the pager asks the API for the next.
    for n in range(8):
        made = page.request.post(
            f"/api/domains/{domain['id']}/addresses",
            data={"local_part": f"zz{n}", "password": PASSWORD},
        )
        assert made.ok, made.text()
    page.get_by_role("searchbox", name="Search").fill("")
    page.locator("#addresses-count").filter(has_text="12 addresses").wait_for()
    pager = page.get_by_role("navigation", name="Pages")
    assert pager.inner_text().count("Page 1 of 2") == 1
    pager.get_by_role("link", name="Next").click()
    pager.get_by_text("Page 2 of 2").wait_for()
    assert page.locator("#addresses-rows a").all_inner_texts() == [f"zz6@{DOMAIN}", f"zz7@{DOMAIN}"]
    assert "page=2" in page.url
    assert pager.get_by_role("link", name="Next").is_hidden()
    pager.get_by_role("link", name="Previous").click()
    pager.get_by_text("Page 1 of 2").wait_for()
    assert page.locator("#addresses-rows tr").count() == 10

    # Without JavaScript the list and the address page still read: the
    # controls are a GET form with the API's list parameters.
    quiet = browser.new_context(
        base_url=tab.origin, java_script_enabled=False, storage_state=page.context.storage_state()
    )
    try:
        plain = quiet.new_page()
        plain.goto(f"/domains/{domain['id']}/addresses")
        plain.get_by_role("searchbox", name="Search").fill("e")
        plain.get_by_label("Order").select_option("desc")
        plain.get_by_role("button", name="Apply").click()
        plain.wait_for_url(re.compile(r"search=e&sort=local_part&direction=desc"))
        # "e" is in dee's address and in Ann's name.
        assert plain.locator("#addresses-rows a").all_inner_texts() == [
            f"dee@{DOMAIN}",
            f"ann@{DOMAIN}",
        ]
        plain.get_by_role("link", name=f"dee@{DOMAIN}").click()
        plain.get_by_role("heading", name=f"dee@{DOMAIN}").wait_for()
        assert plain.locator("#folders tbody th").count() == 6
    finally:
        quiet.close()

    # Deleting an address takes its mail; the list no longer has it.
    page.goto(f"/addresses/{address_id}")
    page.get_by_label(f"Type ann@{DOMAIN} to confirm").fill(f"ann@{DOMAIN}")
    page.get_by_role("button", name="Delete address").click()
    page.wait_for_url(f"**/domains/{domain['id']}/addresses")
    assert page.request.get(f"/api/addresses/{address_id}").status == 404
    assert page.locator("#addresses-count").inner_text() == "11 addresses"

    # The session ends elsewhere: the next request leads to sign-in, and back here.
    assert page.request.post("/api/auth/logout", data={}).ok
    here = page.url.removeprefix(tab.origin)
    page.get_by_role("searchbox", name="Search").fill("bob")
    page.wait_for_url("**/signin?next=*")
    assert unquote(page.url.split("next=", 1)[1]) == here
