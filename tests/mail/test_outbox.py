"""Mail the panel sends: full MIME messages, sealed on the outbound queue; links logged in development."""

from __future__ import annotations

import logging
import shutil
from datetime import UTC, datetime, timedelta

import pytest

from common.crypto import SealError
from common.db import Database
from common.migrations import MigrationSet, migrate
from gateway.main import all_migrations
from mail.outbox import store
from mail.service import MIGRATIONS
from mta import mailstore
from tests.mail.factories import outbox, token_from


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
    assert b"\r\n" in row["message"]  # SMTP line endings, ready for the MTA


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


async def test_links_are_stored_sealed_and_still_work_when_opened(client, runtime):
    """Issue 11: a database reader cannot lift a live reset or verification link."""
    signup = {"email": "new@example.com", "password": "long enough pw"}
    assert (await client.post("/api/auth/signup", json=signup)).status == 201
    forgot = await client.post("/api/auth/password/forgot", json={"email": signup["email"]})
    assert forgot.status == 202
    await runtime.jobs.run_due()

    # What a reader of the database sees: every column of every queued row.
    dump = "\n".join(
        r["row"]
        for r in await runtime.db.fetch_all(
            "SELECT row_to_json(o)::text AS row FROM mta.outbound_messages o"
            " UNION ALL SELECT row_to_json(r)::text FROM mta.outbound_recipients r"
        )
    )
    opened = {row["kind"]: msg for row, msg in await outbox(runtime)}
    assert set(opened) == {"verify_email", "password_reset"}
    tokens = {kind: token_from(msg) for kind, msg in opened.items()}
    for token in tokens.values():
        assert token not in dump
    for text in ("token=", "verify-email", "reset-password", "open this link"):
        assert text not in dump
    sealed = await runtime.db.fetch_all("SELECT raw, raw_sealed FROM mta.outbound_messages")
    assert len(sealed) == 2 and all(r["raw"] is None and r["raw_sealed"] for r in sealed)
    # Sealed for this purpose under SECRET: another secret opens nothing.
    with pytest.raises(SealError):
        mailstore.outbound_sealer("another secret " + "y" * 32).open_bytes(sealed[0]["raw_sealed"])

    # Opened the way the MTA reads the outbox, both links work.
    verified = await client.post("/api/auth/verify", json={"token": tokens["verify_email"]})
    assert verified.status == 200
    reset = await client.post(
        "/api/auth/password/reset",
        json={"token": tokens["password_reset"], "password": "a brand new password"},
    )
    assert reset.status == 200
    login = await client.post(
        "/api/auth/login", json={"email": signup["email"], "password": "a brand new password"}
    )
    assert login.status == 200


async def test_migration_withdraws_links_queued_unsealed(empty_database_url, tmp_path):
    """Rows queued before sealing: links are erased and stop working; notices stay."""
    sealing = "0051_outbox_sealed.sql"
    before = tmp_path / "mail"
    shutil.copytree(MIGRATIONS.directory, before)
    (before / sealing).unlink()
    sets = all_migrations()
    db = await Database.connect(empty_database_url, size=2)
    try:
        await migrate(db, [MigrationSet("mail", before) if s.schema == "mail" else s for s in sets])
        now = datetime.now(UTC)
        account_id = await db.fetch_val(
            "INSERT INTO mail.accounts (email, password_hash, referral_code, created_at,"
            " updated_at) VALUES ('old@example.com', 'x', 'ref', %s, %s) RETURNING id::text",
            (now, now),
        )
        await db.execute(
            "INSERT INTO mail.account_tokens (account_id, kind, token_hash, created_at,"
            " expires_at) VALUES (%s, 'password_reset', 'h', %s, %s)",
            (account_id, now, now + timedelta(hours=1)),
        )
        for kind, body in (
            ("password_reset", b"reset-password?token=live"),
            ("security_notice", b"the password was changed"),
        ):
            await db.execute(
                "INSERT INTO mail.outbox (account_id, kind, mail_from, rcpt_to, subject, message,"
                " created_at) VALUES (%s, %s, 'f@x', 'old@example.com', 's', %s, %s)",
                (account_id, kind, body, now),
            )

        assert await migrate(db, sets) == [f"mail/{sealing}"]

        rows = await db.fetch_all("SELECT kind, message, last_error FROM mail.outbox ORDER BY kind")
        reset, notice = rows
        assert reset["message"] is None and "withdrawn" in reset["last_error"]
        assert bytes(notice["message"]) == b"the password was changed"
        assert await db.fetch_val("SELECT expires_at <= now() FROM mail.account_tokens")
        async with db.connection() as conn:
            unsent = await store.unsent(conn, store.outbox_sealer("s" * 40))
        assert [(r["kind"], r["message"]) for r in unsent] == [
            ("security_notice", b"the password was changed")
        ]
    finally:
        await db.close()
