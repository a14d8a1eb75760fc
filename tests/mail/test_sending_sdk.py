"""The sending API through the real gateway with the resend Python SDK, unmodified.

The SDK is pointed at the gateway with ``resend.api_url`` (tests/mail/sending_helpers.py);
every success and every documented error is what the SDK itself makes of our answer.
"""

from __future__ import annotations

import asyncio
import email
from datetime import timedelta
from email.policy import default as default_policy

import pytest
import resend
from resend.exceptions import (
    InvalidApiKeyError,
    MissingApiKeyError,
    MissingRequiredFieldsError,
    ResendError,
    ValidationError,
)

from tests.mail.factories import signed_in
from tests.mail.hosting_fixtures import settings  # noqa: F401
from tests.mail.sending_helpers import api_key, publish, sending_domain

MESSAGE = {
    "from": "Acme <hello@example.com>",
    "to": ["ann@example.org"],
    "subject": "Welcome",
    "html": "<p>Hello <strong>Ann</strong></p>",
    "text": "Hello Ann",
}


async def raw_of(runtime, email_id: str) -> email.message.EmailMessage:
    row = await runtime.db.fetch_one(
        "SELECT raw FROM mta.outbound_messages WHERE id = %s", (email_id,)
    )
    return email.message_from_bytes(bytes(row["raw"]), policy=default_policy)


async def test_send_then_get_and_list_with_the_sdk(client, runtime, dns_server, sdk):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    params = {
        **MESSAGE,
        "cc": "Carl <carl@example.org>",
        "bcc": ["boss@example.net"],
        "reply_to": "support@example.com",
        "tags": [{"name": "category", "value": "welcome"}],
        "headers": {"X-Entity-Ref-ID": "42"},
        "attachments": [{"filename": "hello.txt", "content": list(b"hello file")}],
    }
    sent = await sdk(key, resend.Emails.send, params)
    email_id = sent["id"]

    got = await sdk(key, resend.Emails.get, email_id)
    assert got["object"] == "email"
    assert got["from"] == "Acme <hello@example.com>"
    assert got["to"] == ["ann@example.org"]
    assert got["cc"] == ["Carl <carl@example.org>"]
    assert got["bcc"] == ["boss@example.net"]
    assert got["reply_to"] == ["support@example.com"]
    assert got["subject"] == "Welcome"
    assert got["html"] == MESSAGE["html"] and got["text"] == "Hello Ann"
    assert got["tags"] == [{"name": "category", "value": "welcome"}]
    assert got["last_event"] == "queued"
    assert got["scheduled_at"] is None
    assert got["attachments"] == [
        {"filename": "hello.txt", "content_type": "text/plain", "size": 10}
    ]
    assert sorted(r["email"] for r in got["recipients"]) == [
        "ann@example.org", "boss@example.net", "carl@example.org",
    ]  # fmt: skip
    assert {r["status"] for r in got["recipients"]} == {"queued"}

    # The queued message: Bcc only in the envelope, the attachment, our Message-ID.
    msg = await raw_of(runtime, email_id)
    assert msg["Bcc"] is None and "boss@example.net" not in msg.as_string()
    assert msg["Message-ID"] == f"<{email_id}@example.com>" == got["message_id"]
    assert msg["X-Entity-Ref-ID"] == "42"
    parts = [p for p in msg.iter_attachments()]
    assert parts[0].get_filename() == "hello.txt" and parts[0].get_content() == "hello file"

    listed = await sdk(key, resend.Emails.list)
    assert listed["object"] == "list" and listed["has_more"] is False
    assert [e["id"] for e in listed["data"]] == [email_id]
    assert listed["data"][0]["last_event"] == "queued"
    assert "html" not in listed["data"][0]


async def test_batch_sends_all_or_nothing(client, runtime, dns_server, sdk):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers, permission="sending_access")
    sent = await sdk(
        key, resend.Batch.send, [MESSAGE, {**MESSAGE, "to": "bob@example.org", "subject": "Hi"}]
    )
    assert len(sent["data"]) == 2
    count = await runtime.db.fetch_val("SELECT count(*) FROM mail.sent_emails")
    assert count == 2

    # One bad email refuses the whole batch (strict, the default): nothing more is sent.
    with pytest.raises(ValidationError) as refused:
        await sdk(key, resend.Batch.send, [MESSAGE, {**MESSAGE, "to": "not an address"}])
    assert refused.value.code == 422
    assert refused.value.message.startswith("emails[1]: Invalid `to` field")
    assert await runtime.db.fetch_val("SELECT count(*) FROM mail.sent_emails") == 2

    # Permissive: the valid ones go, the others come back with their index.
    partial = await sdk(
        key,
        resend.Batch.send,
        [{**MESSAGE, "to": "nope"}, MESSAGE],
        {"batch_validation": "permissive"},
    )
    assert len(partial["data"]) == 1
    assert partial["errors"][0]["index"] == 0
    assert await runtime.db.fetch_val("SELECT count(*) FROM mail.sent_emails") == 3


async def test_batch_over_100_is_refused(client, runtime, dns_server, sdk):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    with pytest.raises(ValidationError) as refused:
        await sdk(key, resend.Batch.send, [MESSAGE] * 101)
    assert refused.value.code == 422 and "at most 100" in refused.value.message


async def test_schedule_reschedule_and_cancel(client, runtime, clock, dns_server, sdk):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    sent = await sdk(key, resend.Emails.send, {**MESSAGE, "scheduled_at": "in 1 hour"})
    got = await sdk(key, resend.Emails.get, sent["id"])
    assert got["last_event"] == "scheduled"
    start = clock.now()
    assert got["scheduled_at"].startswith((start.replace(hour=start.hour + 1)).isoformat()[:19])
    assert [e["type"] for e in got["events"]] == ["email.scheduled"]
    # Its Date is when it is to leave, not when it was asked for.
    msg = await raw_of(runtime, sent["id"])
    assert msg["Date"].datetime == start + timedelta(hours=1)

    later = "2030-01-03T09:30:00+00:00"
    moved = await sdk(key, resend.Emails.update, {"id": sent["id"], "scheduled_at": later})
    assert moved["object"] == "email" and moved["id"] == sent["id"]
    got = await sdk(key, resend.Emails.get, sent["id"])
    assert got["scheduled_at"].startswith("2030-01-03T09:30:00")
    due = await runtime.db.fetch_val(
        "SELECT min(next_attempt_at) FROM mta.outbound_recipients WHERE message_id = %s",
        (sent["id"],),
    )
    assert due.isoformat().startswith("2030-01-03T09:30:00")

    canceled = await sdk(key, resend.Emails.cancel, sent["id"])
    assert canceled == {
        "object": "email",
        "id": sent["id"],
        "http_headers": canceled["http_headers"],
    }
    got = await sdk(key, resend.Emails.get, sent["id"])
    assert got["last_event"] == "canceled"
    assert [e["type"] for e in got["events"]] == ["email.scheduled", "email.canceled"]

    # Only while scheduled (the spec's state table).
    with pytest.raises(ValidationError) as again:
        await sdk(key, resend.Emails.cancel, sent["id"])
    assert again.value.code == 422 and "not scheduled" in again.value.message
    with pytest.raises(ValidationError):
        await sdk(key, resend.Emails.update, {"id": sent["id"], "scheduled_at": "in 2 hours"})


async def test_an_immediate_email_cannot_be_canceled(client, runtime, dns_server, sdk):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    sent = await sdk(key, resend.Emails.send, MESSAGE)
    with pytest.raises(ValidationError):
        await sdk(key, resend.Emails.cancel, sent["id"])
    assert (await sdk(key, resend.Emails.get, sent["id"]))["last_event"] == "queued"


async def test_idempotent_retry_sends_once(client, runtime, dns_server, sdk):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    options = {"idempotency_key": "welcome-user/123"}
    first = await sdk(key, resend.Emails.send, MESSAGE, options)
    again = await sdk(key, resend.Emails.send, MESSAGE, options)
    assert again["id"] == first["id"]
    assert await runtime.db.fetch_val("SELECT count(*) FROM mta.outbound_messages") == 1

    with pytest.raises(ResendError) as changed:
        await sdk(key, resend.Emails.send, {**MESSAGE, "subject": "Other"}, options)
    assert (changed.value.code, changed.value.error_type) == (409, "invalid_idempotent_request")

    # Batch keys are remembered the same way.
    batch_options = {"idempotency_key": "batch/1"}
    one = await sdk(key, resend.Batch.send, [MESSAGE, MESSAGE], batch_options)
    two = await sdk(key, resend.Batch.send, [MESSAGE, MESSAGE], batch_options)
    assert one["data"] == two["data"]
    assert await runtime.db.fetch_val("SELECT count(*) FROM mta.outbound_messages") == 3

    # Kept 24 hours: after that the same key sends again.
    runtime.clock.advance(hours=24, seconds=1)
    later = await sdk(key, resend.Emails.send, MESSAGE, options)
    assert later["id"] != first["id"]


async def test_idempotency_key_errors(client, runtime, dns_server, sdk):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    with pytest.raises(ResendError) as too_long:
        await sdk(key, resend.Emails.send, MESSAGE, {"idempotency_key": "k" * 257})
    assert (too_long.value.code, too_long.value.error_type) == (400, "invalid_idempotency_key")

    # A request still holding the key (its transaction open): the second is told so.
    account = await runtime.db.fetch_val("SELECT account_id::text FROM mail.api_keys")
    async with runtime.db.transaction() as conn:
        from common.db import fetch_val

        await fetch_val(
            conn,
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
            (f"mail.idempotency:{account}:busy",),
        )
        with pytest.raises(ResendError) as busy:
            await sdk(key, resend.Emails.send, MESSAGE, {"idempotency_key": "busy"})
    assert (busy.value.code, busy.value.error_type) == (409, "concurrent_idempotent_requests")


async def test_missing_invalid_and_restricted_keys(client, runtime, dns_server, sdk):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    sending = await api_key(client, headers, permission="sending_access")

    with pytest.raises(MissingApiKeyError) as missing:
        await sdk("", resend.Emails.send, MESSAGE)
    assert (missing.value.code, missing.value.error_type) == (401, "missing_api_key")
    resp = await client.post("/api/emails", json=MESSAGE)
    body = await resp.json()
    assert resp.status == 401 and body["name"] == "missing_api_key"
    assert body == {"statusCode": 401, "name": "missing_api_key", "message": body["message"]}

    with pytest.raises(InvalidApiKeyError) as invalid:
        await sdk("re_12345678_notarealkey", resend.Emails.send, MESSAGE)
    assert (invalid.value.code, invalid.value.error_type) == (403, "invalid_api_key")

    # A sending key sends, and only sends.
    sent = await sdk(sending, resend.Emails.send, MESSAGE)
    for call, args in (
        (resend.Emails.list, ()),
        (resend.Emails.get, (sent["id"],)),
        (resend.Emails.cancel, (sent["id"],)),
    ):
        with pytest.raises(ResendError) as restricted:
            await sdk(sending, call, *args)
        assert (restricted.value.code, restricted.value.error_type) == (401, "restricted_api_key")
    resp = await client.get("/api/domains", headers={"Authorization": f"Bearer {sending}"})
    assert resp.status == 401 and (await resp.json())["name"] == "restricted_api_key"

    # A full-access key reaches the panel's routes like a session, as at Resend.
    full = await api_key(client, headers)
    resp = await client.get("/api/domains", headers={"Authorization": f"Bearer {full}"})
    assert resp.status == 200 and (await resp.json())["total"] == 1


@pytest.mark.parametrize(
    ("change", "error", "name", "fragment"),
    [
        ({"to": None}, MissingRequiredFieldsError, "missing_required_field", "Missing `to` field"),
        ({"subject": None}, MissingRequiredFieldsError, "missing_required_field", "`subject`"),
        (
            {"html": None, "text": None},
            MissingRequiredFieldsError,
            "missing_required_field",
            "`html`",
        ),
        ({"to": "ann"}, ValidationError, "validation_error", "Invalid `to` field"),
        ({"to": ["a@example.org"] * 51}, ValidationError, "validation_error", "at most 50"),
        ({"from": "Acme"}, ResendError, "invalid_from_address", "Invalid `from` field"),
        (
            {"tags": [{"name": "bad tag!", "value": "x"}]},
            ValidationError,
            "validation_error",
            "Tag names",
        ),
        ({"headers": {"Subject": "x"}}, ValidationError, "validation_error", "`Subject` header"),
        ({"attachments": [{"filename": "a.txt"}]}, ResendError, "invalid_attachment", "content"),
        (
            {"attachments": [{"filename": "a", "content": "%%%"}]},
            ResendError,
            "invalid_attachment",
            "base64",
        ),
        ({"scheduled_at": "next blue moon"}, ValidationError, "validation_error", "`scheduled_at`"),
        ({"scheduled_at": "2020-01-01T00:00:00Z"}, ValidationError, "validation_error", "future"),
        ({"scheduled_at": "in 31 days"}, ValidationError, "validation_error", "30 days"),
        ({"template": {"id": "t"}}, ValidationError, "validation_error", "`template`"),
    ],
)
async def test_validation_errors_are_422_with_resend_names(
    client, runtime, dns_server, sdk, change, error, name, fragment
):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    params = {k: v for k, v in {**MESSAGE, **change}.items() if v is not None}
    with pytest.raises(error) as refused:
        await sdk(key, resend.Emails.send, params)
    assert (refused.value.code, refused.value.error_type) == (422, name)
    assert fragment in refused.value.message
    assert await runtime.db.fetch_val("SELECT count(*) FROM mail.sent_emails") == 0


async def test_a_body_that_is_not_json_is_400_validation_error(client, runtime, dns_server):
    _, headers = await signed_in(runtime)
    key = await api_key(client, headers)
    resp = await client.post(
        "/api/emails",
        data=b"{not json",
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    assert resp.status == 400 and (await resp.json())["name"] == "validation_error"


async def test_from_domain_must_be_owned_and_verified(client, runtime, dns_server, sdk):
    _, headers = await signed_in(runtime)
    key = await api_key(client, headers)
    # Not a domain of the account at all.
    with pytest.raises(ResendError) as unknown:
        await sdk(key, resend.Emails.send, {**MESSAGE, "from": "a@elsewhere.example"})
    assert (unknown.value.code, unknown.value.error_type) == (403, "validation_error")
    assert unknown.value.message == (
        "The elsewhere.example domain is not verified. Please, add and verify your domain."
    )
    # Its SPF found but not its DKIM key, then both.
    await sending_domain(client, headers, dns_server, records=("spf",))
    with pytest.raises(ResendError) as half:
        await sdk(key, resend.Emails.send, MESSAGE)
    assert (half.value.code, half.value.error_type) == (403, "validation_error")
    domain = (await (await client.get("/api/domains", headers=headers)).json())["data"][0]
    records = await (await client.get(f"/api/domains/{domain['id']}/dns", headers=headers)).json()

    publish(dns_server, records["records"], ("dkim",))
    await client.post(f"/api/domains/{domain['id']}/check", headers=headers)
    assert (await sdk(key, resend.Emails.send, MESSAGE))["id"]

    # Another account's verified domain reads exactly like an unverified one.
    _, other_headers = await signed_in(runtime)
    other_key = await api_key(client, other_headers)
    with pytest.raises(ResendError) as foreign:
        await sdk(other_key, resend.Emails.send, MESSAGE)
    assert foreign.value.code == 403
    assert foreign.value.message.startswith("The example.com domain is not verified")


async def test_a_key_held_to_one_domain_sends_only_from_it(client, runtime, dns_server, sdk):
    _, headers = await signed_in(runtime)
    one = await sending_domain(client, headers, dns_server, "example.com")
    await sending_domain(client, headers, dns_server, "example.net")
    key = await api_key(client, headers, permission="sending_access", domain_id=one["id"])
    assert (await sdk(key, resend.Emails.send, MESSAGE))["id"]
    with pytest.raises(ResendError) as refused:
        await sdk(key, resend.Emails.send, {**MESSAGE, "from": "hi@example.net"})
    assert refused.value.code == 403 and "only send from the example.com" in refused.value.message


async def test_list_pages_newest_first_with_after_and_before(
    client, runtime, clock, dns_server, sdk
):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    ids = []
    for n in range(5):
        ids.append((await sdk(key, resend.Emails.send, {**MESSAGE, "subject": f"n{n}"}))["id"])
        clock.advance(1)
    newest = ids[::-1]
    first = await sdk(key, resend.Emails.list, {"limit": 2})
    assert [e["id"] for e in first["data"]] == newest[:2] and first["has_more"] is True
    second = await sdk(key, resend.Emails.list, {"limit": 2, "after": newest[1]})
    assert [e["id"] for e in second["data"]] == newest[2:4] and second["has_more"] is True
    last = await sdk(key, resend.Emails.list, {"limit": 2, "after": newest[3]})
    assert [e["id"] for e in last["data"]] == newest[4:] and last["has_more"] is False
    back = await sdk(key, resend.Emails.list, {"limit": 2, "before": newest[2]})
    assert [e["id"] for e in back["data"]] == newest[:2] and back["has_more"] is False
    for bad in ({"limit": 0}, {"limit": 101}, {"after": ids[0], "before": ids[1]}):
        with pytest.raises(ValidationError):
            await sdk(key, resend.Emails.list, bad)
    # Another account's email is no cursor of ours, and not readable.
    _, other_headers = await signed_in(runtime)
    other = await api_key(client, other_headers)
    with pytest.raises(ValidationError):
        await sdk(other, resend.Emails.list, {"after": ids[0]})
    with pytest.raises(ResendError) as foreign:
        await sdk(other, resend.Emails.get, ids[0])
    assert foreign.value.code == 404


async def test_reads_cancel_and_reschedule_accept_a_session(client, runtime, dns_server, sdk):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    sent = await sdk(key, resend.Emails.send, {**MESSAGE, "scheduled_at": "in 10 minutes"})
    listed = await (await client.get("/api/emails", headers=headers)).json()
    assert [e["id"] for e in listed["data"]] == [sent["id"]]
    resp = await client.patch(
        f"/api/emails/{sent['id']}", json={"scheduled_at": "in 20 minutes"}, headers=headers
    )
    assert resp.status == 200
    resp = await client.post(f"/api/emails/{sent['id']}/cancel", headers=headers)
    assert resp.status == 200
    got = await (await client.get(f"/api/emails/{sent['id']}", headers=headers)).json()
    assert got["last_event"] == "canceled"
    # Sending itself takes a key (the spec's "any key"), not a session.
    resp = await client.post("/api/emails", json=MESSAGE, headers=headers)
    assert resp.status == 401 and (await resp.json())["name"] == "missing_api_key"


async def test_batch_is_a_literal_route_not_an_id(client, runtime):
    _, headers = await signed_in(runtime)
    key = await api_key(client, headers)
    resp = await client.get("/api/emails/batch", headers={"Authorization": f"Bearer {key}"})
    assert resp.status == 405 and (await resp.json())["name"] == "method_not_allowed"


async def test_a_retry_replays_even_when_its_schedule_has_passed(
    client, runtime, clock, dns_server, sdk
):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    params = {**MESSAGE, "scheduled_at": "2030-01-01T12:30:00Z"}
    options = {"idempotency_key": "reminder/7"}
    first = await sdk(key, resend.Emails.send, params, options)
    clock.advance(hours=1)  # the retry comes after the time it named
    again = await sdk(key, resend.Emails.send, params, options)
    assert again["id"] == first["id"]
    assert await runtime.db.fetch_val("SELECT count(*) FROM mail.sent_emails") == 1


async def test_the_same_key_sent_twice_at_once_sends_one_email(client, runtime, dns_server, sdk):
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    options = {"idempotency_key": "double-click/1"}

    async def attempt() -> str:
        try:
            return (await sdk(key, resend.Emails.send, MESSAGE, options))["id"]
        except ResendError as exc:
            return str(exc.error_type)

    outcomes = await asyncio.gather(*(attempt() for _ in range(4)))
    ids = {o for o in outcomes if o != "concurrent_idempotent_requests"}
    # Each answer is the one email's id, or "still in progress": never a second email.
    assert len(ids) == 1
    assert await runtime.db.fetch_val("SELECT count(*) FROM mail.sent_emails") == 1


async def test_special_use_recipients_are_accepted_or_refused_with_the_reason(
    client, runtime, dns_server, sdk
):
    """.test names are ordinary (RFC 6761 6.2) on the API as on every sending path
    (common/recipients.py); the names refused on purpose say why, not "format"."""
    _, headers = await signed_in(runtime)
    await sending_domain(client, headers, dns_server)
    key = await api_key(client, headers)
    sent = await sdk(
        key,
        resend.Emails.send,
        {**MESSAGE, "to": ["x@receiver.test"], "cc": "Ops <ops@test>", "bcc": "b@mx.Example"},
    )
    got = await sdk(key, resend.Emails.get, sent["id"])
    assert [r["email"] for r in got["recipients"]] == [
        "x@receiver.test",
        "ops@test",
        "b@mx.example",
    ]
    for to, reason in [
        ("x@host.invalid", "RFC 6761 6.4"),
        ("x@printer.local", "RFC 6762"),
        ("x@[127.0.0.1]", "address literals"),
    ]:
        with pytest.raises(ValidationError) as refused:
            await sdk(key, resend.Emails.send, {**MESSAGE, "to": [to]})
        assert (refused.value.code, refused.value.error_type) == (422, "validation_error")
        assert refused.value.message.startswith("Invalid `to` field.")
        assert reason in refused.value.message and "format" not in refused.value.message
    # A malformed address keeps Resend's wording.
    with pytest.raises(ValidationError) as refused:
        await sdk(key, resend.Emails.send, {**MESSAGE, "to": ["a..b@example.org"]})
    assert "`email@example.com`" in refused.value.message
