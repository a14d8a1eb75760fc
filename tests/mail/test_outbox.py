"""Mail the panel sends: full MIME messages in the outbox; links logged in development."""

from __future__ import annotations

import logging

from tests.mail.factories import outbox


async def test_verification_message_is_complete_mime(client, runtime):
    resp = await client.post(
        "/api/auth/signup", json={"email": "new@example.com", "password": "long enough pw"}
    )
    assert resp.status == 201
    [(row, msg)] = await outbox(runtime)
    assert (row["kind"], row["rcpt_to"], row["subject"]) == (
        "verify_email",
        "new@example.com",
        "Verify your email address",
    )
    assert msg["From"] == "no-reply@localhost"
    assert msg["To"] == "new@example.com"
    assert msg["Message-ID"].endswith("@localhost>")
    assert msg["Date"] is not None
    assert msg["Auto-Submitted"] == "auto-generated"
    assert msg.get_content_type() == "text/plain"
    assert "http://localhost:4300/verify-email?token=" in msg.get_content()
    raw = await runtime.db.fetch_val("SELECT message FROM mail.outbox")
    assert b"\r\n" in bytes(raw)  # SMTP line endings, ready for the MTA


async def test_links_are_logged_only_in_development(make_client, runtime, caplog):
    caplog.set_level(logging.INFO, logger="mail.outbox.service")
    test_env = await make_client({"MAIL_FROM": "panel@mail.example"})
    await test_env.post(
        "/api/auth/signup", json={"email": "a@example.com", "password": "long enough pw"}
    )
    assert "verify-email?token=" not in caplog.text

    dev = await make_client(app_env="development")
    await dev.post(
        "/api/auth/signup", json={"email": "b@example.com", "password": "long enough pw"}
    )
    assert (
        "verify_email for b@example.com: http://localhost:4300/verify-email?token=" in caplog.text
    )
    senders = [msg["From"] for _, msg in await outbox(runtime)]
    assert sorted(senders) == ["no-reply@localhost", "panel@mail.example"]
