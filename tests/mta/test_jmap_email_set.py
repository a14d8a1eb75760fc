"""Email/set, Email/changes, Email/copy, Email/import and SearchSnippet/get."""

from __future__ import annotations

from typing import Any

import pytest

from common.db import fetch_all, fetch_one
from mta.context import MtaContext
from mta.jmap.email import get, query, snippet, write
from mta.jmap.email.errors import MethodError
from tests.mta.jmap_email import Box, make_box, message


async def _counts(box: Box) -> dict[str, tuple[int, int]]:
    async with box.db.connection() as conn:
        rows = await fetch_all(
            conn,
            "SELECT role, total_emails, unread_emails FROM mta.mailboxes WHERE address_id = %s",
            (box.account_id,),
        )
    return {r["role"]: (r["total_emails"], r["unread_emails"]) for r in rows}


async def _state(box: Box) -> str:
    return (await box.call(get.get, {"ids": []}))["state"]


async def test_keywords_and_moves_by_patch_keep_counts_and_changes(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    first = await box.deliver(message("one"))
    second = await box.deliver(message("two"))
    assert (await _counts(box))["inbox"] == (2, 2)
    state = await _state(box)
    res = await box.call(write.set_emails, {"ifInState": state, "update": {
        first: {"keywords/$seen": True, "keywords/$Flagged": True},
        second: {"mailboxIds": {box.roles["archive"]: True}, "keywords": {"$seen": True}},
    }})  # fmt: skip
    assert res["updated"] == {first: None, second: None} and res["notUpdated"] is None
    assert res["oldState"] == state and res["newState"] != state
    counts = await _counts(box)
    assert counts["inbox"] == (1, 0) and counts["archive"] == (1, 0)
    items = (
        await box.call(get.get, {"ids": [first, second], "properties": ["keywords", "mailboxIds"]})
    )["list"]
    assert items[0]["keywords"] == {"$seen": True, "$flagged": True}
    assert items[1]["mailboxIds"] == {box.roles["archive"]: True}
    # Unset one keyword; add and remove a mailbox by path.
    await box.call(write.set_emails, {"update": {first: {
        "keywords/$seen": None, f"mailboxIds/{box.roles['trash']}": True,
        f"mailboxIds/{box.roles['inbox']}": None}}})  # fmt: skip
    assert (await _counts(box))["trash"] == (1, 1)
    # Errors: a stale state, no mailbox left, a foreign mailbox, an immutable property.
    with pytest.raises(MethodError) as err:
        await box.call(write.set_emails, {"ifInState": state, "update": {first: {"keywords": {}}}})
    assert err.value.type == "stateMismatch"
    other = await make_box(mta_ctx, "mallory@other.test")
    res = await box.call(write.set_emails, {"update": {
        first: {"mailboxIds": {}},
        second: {"mailboxIds": {other.roles["inbox"]: True}},
        "00000000-0000-0000-0000-000000000000": {"keywords": {}},
    }})  # fmt: skip
    assert res["notUpdated"][first]["type"] == "invalidProperties"
    assert res["notUpdated"][second]["type"] == "invalidProperties"
    assert res["notUpdated"]["00000000-0000-0000-0000-000000000000"]["type"] == "notFound"
    res = await box.call(write.set_emails, {"update": {first: {"subject": "changed"}}})
    assert res["notUpdated"][first]["properties"] == ["subject"]
    box.email.max_mailboxes_per_email = 2
    three = {box.roles[r]: True for r in ("inbox", "archive", "trash")}
    res = await box.call(write.set_emails, {"update": {first: {"mailboxIds": three}}})
    assert res["notUpdated"][first]["type"] == "tooManyMailboxes"
    # Another account cannot touch this one's mail.
    res = await other.call(
        write.set_emails, {"update": {first: {"keywords": {}}}, "destroy": [second]}
    )
    assert res["notUpdated"][first]["type"] == "notFound"
    assert res["notDestroyed"][second]["type"] == "notFound"


async def test_create_from_parts_and_destroy_keep_threads_and_quota(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    original = await box.deliver(message("Plans", "Let's plan.", message_id="plan@remote.test"))
    upload: dict[str, bytes] = {}

    async def uploads(account_id: str, blob_id: str) -> bytes | None:
        return upload.get(blob_id) if account_id == box.account_id else None

    box.email.uploads = uploads
    upload["up-1"] = b"%PDF-1.4 attached"
    draft = {
        "mailboxIds": {box.roles["drafts"]: True},
        "keywords": {"$draft": True, "$seen": True},
        "from": [{"name": "Alice", "email": "alice@example.test"}],
        "to": [{"name": "Bob Example", "email": "bob@remote.test"}],
        "bcc": [{"name": None, "email": "secret@hidden.test"}],
        "subject": "Re: Plans — café",
        "inReplyTo": ["plan@remote.test"],
        "references": ["plan@remote.test"],
        "header:X-Mailer:asText": "jmap-tests",
        "textBody": [{"partId": "t", "type": "text/plain"}],
        "htmlBody": [{"partId": "h", "type": "text/html"}],
        "bodyValues": {
            "t": {"value": "Sounds good, café at 10."},
            "h": {"value": "<p>Sounds good</p>"},
        },
        "attachments": [{"blobId": "up-1", "type": "application/pdf", "name": "agenda.pdf"}],
    }
    res = await box.call(write.set_emails, {"create": {"d1": draft, "bad": {"mailboxIds": {}}, "gone": {
        "mailboxIds": {box.roles["drafts"]: True}, "attachments": [{"blobId": "nope", "type": "image/png"}]}}})  # fmt: skip
    assert res["notCreated"]["bad"]["type"] == "invalidProperties"
    assert res["notCreated"]["gone"]["type"] == "blobNotFound"
    made = res["created"]["d1"]
    async with box.db.connection() as conn:
        thread = await fetch_one(
            conn, "SELECT thread_id::text FROM mta.emails WHERE id = %s", (original,)
        )
    assert made["threadId"] == thread["thread_id"]  # joined the thread it replies to
    (item,) = (await box.call(get.get, {"ids": [made["id"]], "properties": [
        "subject", "bcc", "keywords", "textBody", "htmlBody", "attachments", "bodyValues",
        "header:X-Mailer:asText", "inReplyTo", "hasAttachment", "preview"],
        "fetchAllBodyValues": True}))["list"]  # fmt: skip
    assert item["subject"] == "Re: Plans — café"
    assert item["bcc"] == [{"name": None, "email": "secret@hidden.test"}]
    assert item["keywords"] == {"$draft": True, "$seen": True}
    assert item["header:X-Mailer:asText"] == "jmap-tests"
    assert item["inReplyTo"] == ["plan@remote.test"]
    assert item["hasAttachment"] is True and item["preview"] == "Sounds good, café at 10."
    assert item["attachments"][0]["name"] == "agenda.pdf"
    text_part = item["textBody"][0]["partId"]
    assert item["bodyValues"][text_part]["value"].strip() == "Sounds good, café at 10."
    found = await box.call(query.query, {"filter": {"bcc": "secret"}})
    assert found["ids"] == [made["id"]]
    async with box.db.connection() as conn:
        usage = await fetch_one(
            conn,
            "SELECT used_bytes, emails FROM mta.quota_usage WHERE address_id = %s",
            (box.account_id,),
        )
    assert usage["emails"] == 2
    state = await _state(box)
    # Destroy both: the thread goes with its last email, the quota gives the bytes back.
    res = await box.call(write.set_emails, {"destroy": [made["id"], original, "nope"]})
    assert sorted(res["destroyed"]) == sorted([made["id"], original])
    assert res["notDestroyed"] == {"nope": {"type": "notFound"}}
    async with box.db.connection() as conn:
        usage = await fetch_one(
            conn,
            "SELECT used_bytes, emails FROM mta.quota_usage WHERE address_id = %s",
            (box.account_id,),
        )
        threads = await fetch_all(
            conn, "SELECT id FROM mta.threads WHERE id = %s", (made["threadId"],)
        )
    assert usage == {"used_bytes": 0, "emails": 0} and threads == []
    async with box.db.connection() as conn:
        logged = await fetch_all(
            conn,
            "SELECT type_name, object_id::text, change FROM mta.changes WHERE address_id = %s AND id > %s",
            (box.account_id, int(state)),
        )
    assert {(r["type_name"], r["object_id"], r["change"]) for r in logged} >= {
        ("Email", made["id"], "destroyed"), ("Email", original, "destroyed"),
        ("Thread", made["threadId"], "destroyed"), ("Mailbox", box.roles["drafts"], "updated"),
    }  # fmt: skip
    assert (await _counts(box))["drafts"] == (0, 0)


async def test_import_and_copy(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    other = await make_box(mta_ctx, "bob@second.test")
    raw = message("Imported", "from an archive", message_id="old@archive.test")
    uploads = {"b1": raw, "b2": b"\x00\x01 not mail"}

    async def read(account_id: str, blob_id: str) -> bytes | None:
        return uploads.get(blob_id)

    box.email.uploads = read
    res = await box.call(write.import_emails, {"emails": {
        "i1": {"blobId": "b1", "mailboxIds": {box.roles["archive"]: True},
               "keywords": {"$seen": True}, "receivedAt": "2020-05-06T07:08:09Z"},
        "i2": {"blobId": "b2", "mailboxIds": {box.roles["archive"]: True}},
        "i3": {"blobId": "missing", "mailboxIds": {box.roles["archive"]: True}},
    }})  # fmt: skip
    imported = res["created"]["i1"]
    assert imported["size"] == len(raw)
    assert res["notCreated"]["i2"]["type"] == "invalidEmail"
    assert res["notCreated"]["i3"]["type"] == "invalidProperties"
    assert res["notCreated"]["i3"]["properties"] == ["blobId"]
    (item,) = (
        await box.call(
            get.get, {"ids": [imported["id"]], "properties": ["receivedAt", "subject", "blobId"]}
        )
    )["list"]
    assert item == {
        "id": imported["id"],
        "receivedAt": "2020-05-06T07:08:09Z",
        "subject": "Imported",
        "blobId": imported["blobId"],
    }
    # Copy into the other account, then destroy the original (onSuccessDestroyOriginal).
    async with box.db.connection() as conn:
        copied, implicit = await write.copy_emails(other.email, conn, box.account_id, other.account_id, {
            "create": {"c1": {"id": imported["id"], "mailboxIds": {other.roles["inbox"]: True}}},
            "onSuccessDestroyOriginal": True,
        })  # fmt: skip
    new = copied["created"]["c1"]
    assert new["blobId"] == imported["blobId"] and new["id"] != imported["id"]
    assert implicit is not None and implicit["destroyed"] == [imported["id"]]
    (item,) = (
        await other.call(
            get.get, {"ids": [new["id"]], "properties": ["keywords", "receivedAt", "subject"]}
        )
    )["list"]
    assert item["keywords"] == {"$seen": True} and item["receivedAt"] == "2020-05-06T07:08:09Z"
    assert (await box.call(get.get, {"ids": [imported["id"]]}))["notFound"] == [imported["id"]]


async def test_search_snippets_mark_matches_and_escape_html(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    first = await box.deliver(message(
        "Budget <script>alert(1)</script> review", "Intro.\n" + "filler words " * 20
        + "The budget for <b>Q3</b> is approved."))  # fmt: skip
    second = await box.deliver(message("Holiday", "Nothing here."))
    res: dict[str, Any] = await box.call(snippet.get_snippets, {
        "emailIds": [first, second, "unknown"], "filter": {"text": "budget"}})  # fmt: skip
    by_id = {s["emailId"]: s for s in res["list"]}
    assert (
        by_id[first]["subject"]
        == "<mark>Budget</mark> &lt;script&gt;alert(1)&lt;/script&gt; review"
    )
    assert (
        "The <mark>budget</mark> for &lt;b&gt;Q3&lt;/b&gt; is approved." in by_id[first]["preview"]
    )
    assert len(by_id[first]["preview"]) < 400
    assert by_id[second] == {"emailId": second, "subject": None, "preview": None}
    assert res["notFound"] == ["unknown"]


async def test_a_plain_text_create_is_one_part_with_one_mime_version(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    res = await box.call(write.set_emails, {"create": {"n": {
        "mailboxIds": {box.roles["drafts"]: True}, "subject": "note",
        "textBody": [{"partId": "1"}], "bodyValues": {"1": {"value": "just text"}},
    }}})  # fmt: skip
    made = res["created"]["n"]
    raw = await box.ctx.blobs.get(made["blobId"])
    assert raw.count(b"MIME-Version:") == 1
    assert b"Content-Type: text/plain" in raw and b"multipart" not in raw


async def test_create_from_a_body_structure_with_an_inline_image(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(64))

    async def uploads(_account: str, blob_id: str) -> bytes | None:
        return png if blob_id == "img" else None

    box.email.uploads = uploads
    structure = {"type": "multipart/alternative", "subParts": [
        {"partId": "t", "type": "text/plain"},
        {"type": "multipart/related", "subParts": [
            {"partId": "h", "type": "text/html"},
            {"blobId": "img", "type": "image/png", "cid": "logo@x", "disposition": "inline"},
        ]},
    ]}  # fmt: skip
    res = await box.call(write.set_emails, {"create": {"m": {
        "mailboxIds": {box.roles["drafts"]: True}, "subject": "Logo",
        "bodyStructure": structure,
        "bodyValues": {"t": {"value": "see the logo"}, "h": {"value": '<img src="cid:logo@x">'}},
    }}})  # fmt: skip
    made = res["created"]["m"]
    (item,) = (await box.call(get.get, {"ids": [made["id"]], "properties": [
        "bodyStructure", "textBody", "htmlBody", "attachments"],
        "bodyProperties": ["partId", "type", "cid", "disposition", "header:Content-Type:asText"],
    }))["list"]  # fmt: skip
    root = item["bodyStructure"]
    assert root["type"] == "multipart/alternative"
    assert [p["type"] for p in root["subParts"]] == ["text/plain", "multipart/related"]
    related = root["subParts"][1]["subParts"]
    assert related[1]["cid"] == "logo@x" and related[1]["disposition"] == "inline"
    assert related[1]["header:Content-Type:asText"] == "image/png"
    # RFC 8621 4.1.4: an image after the first part of a multipart/related is
    # not inline body content; it is listed with the attachments.
    assert [p["type"] for p in item["textBody"]] == ["text/plain"]
    assert [p["type"] for p in item["htmlBody"]] == ["text/html"]
    assert [p["cid"] for p in item["attachments"]] == ["logo@x"]


async def test_create_and_import_past_the_quota_answer_over_quota(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    first = await box.deliver(message("fills it", "x" * 2000))
    raw = message("Imported", "y" * 2000)
    async with box.db.connection() as conn:
        used = await fetch_one(
            conn, "SELECT used_bytes FROM mta.quota_usage WHERE address_id = %s", (box.account_id,)
        )
        assert used is not None
    # Room for 100 more bytes: nothing of 2 kB fits.
    await box.db.execute(
        "UPDATE mail.addresses SET quota_bytes = %s WHERE id = %s",
        (used["used_bytes"] + 100, box.account_id),
    )

    async def read(account_id: str, blob_id: str) -> bytes | None:
        return raw if blob_id == "b1" else None

    box.email.uploads = read
    res = await box.call(write.import_emails, {"emails": {
        "i": {"blobId": "b1", "mailboxIds": {box.roles["archive"]: True}}}})  # fmt: skip
    assert res["created"] is None and res["notCreated"]["i"]["type"] == "overQuota"
    res = await box.call(write.set_emails, {"create": {"d": {
        "mailboxIds": {box.roles["drafts"]: True}, "subject": "big",
        "bodyValues": {"b": {"value": "z" * 2000}},
        "textBody": [{"partId": "b", "type": "text/plain"}]}}})  # fmt: skip
    assert res["created"] is None and res["notCreated"]["d"]["type"] == "overQuota"
    # Freeing room (destroying the stored one) lets the import in.
    await box.call(write.set_emails, {"destroy": [first]})
    res = await box.call(write.import_emails, {"emails": {
        "i": {"blobId": "b1", "mailboxIds": {box.roles["archive"]: True}}}})  # fmt: skip
    assert set(res["created"]) == {"i"}


async def test_the_plans_storage_limit_also_answers_over_quota(mta_ctx: MtaContext):
    """The account's plan (storage_bytes over all its addresses) caps JMAP writes as it caps RCPT."""
    from tests.mta.test_billing_smtp import use_plans

    box = await make_box(mta_ctx)
    await use_plans(box.db, mta_ctx.runtime.clock)  # the test plan allows 1000 bytes per account
    raw = message("Imported", "y" * 2000)

    async def read(account_id: str, blob_id: str) -> bytes | None:
        return raw if blob_id == "b1" else None

    box.email.uploads = read
    res = await box.call(write.import_emails, {"emails": {
        "i": {"blobId": "b1", "mailboxIds": {box.roles["archive"]: True}}}})  # fmt: skip
    assert res["created"] is None and res["notCreated"]["i"]["type"] == "overQuota"
    # Without a storage limit in the plan, the same import goes in.
    await box.db.execute("UPDATE mail.plans SET limits = limits - 'storage_bytes'")
    res = await box.call(write.import_emails, {"emails": {
        "i": {"blobId": "b1", "mailboxIds": {box.roles["archive"]: True}}}})  # fmt: skip
    assert set(res["created"]) == {"i"}
