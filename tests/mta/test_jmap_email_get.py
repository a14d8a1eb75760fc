"""Email/get and Email/parse over mail delivered through the store's delivery path."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mta.context import MtaContext
from mta.jmap.email import get
from mta.jmap.email.blobs import read_blob
from mta.jmap.email.errors import MethodError
from tests.mta.jmap_email import make_box, message

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


async def test_listing_properties_come_from_columns_and_match_the_message(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    email_id = await box.deliver(
        message(
            "Quarterly report",
            "The numbers are in.\nSee attached.",
            message_id="q1@remote.test",
            attachments=[("chart.png", "image/png", PNG)],
            date=datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC),
        )
    )
    props = ["id", "threadId", "mailboxIds", "keywords", "size", "receivedAt", "from", "to",
             "subject", "sentAt", "hasAttachment", "preview", "messageId"]  # fmt: skip
    res = await box.call(get.get, {"ids": [email_id, "nope"], "properties": props})
    assert res["notFound"] == ["nope"]
    (item,) = res["list"]
    assert item["mailboxIds"] == {box.roles["inbox"]: True}
    assert item["keywords"] == {}
    assert item["from"] == [{"name": "Bob Example", "email": "bob@remote.test"}]
    assert item["to"] == [{"name": "Alice", "email": "alice@example.test"}]
    assert item["subject"] == "Quarterly report"
    assert item["sentAt"] == "2026-03-04T05:06:07Z"
    assert item["messageId"] == ["q1@remote.test"]
    assert item["hasAttachment"] is True
    assert item["preview"].startswith("The numbers are in. See attached.")
    assert item["size"] > len(PNG)
    assert res["state"] != "0"


async def test_body_structure_parts_values_and_part_blobs(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    email_id = await box.deliver(
        message(
            "Both",
            "plain café",
            html="<p>html <b>café</b></p>",
            attachments=[("chart.png", "image/png", PNG)],
        )
    )
    res = await box.call(
        get.get,
        {
            "ids": [email_id],
            "properties": ["bodyStructure", "textBody", "htmlBody", "attachments", "bodyValues"],
            "fetchTextBodyValues": True,
            "fetchHTMLBodyValues": True,
            "maxBodyValueBytes": 8,
        },
    )
    (item,) = res["list"]
    root = item["bodyStructure"]
    assert root["type"] == "multipart/mixed" and root["partId"] is None
    alt, att = root["subParts"]
    assert alt["type"] == "multipart/alternative"
    assert [p["type"] for p in alt["subParts"]] == ["text/plain", "text/html"]
    assert [p["type"] for p in item["textBody"]] == ["text/plain"]
    assert [p["type"] for p in item["htmlBody"]] == ["text/html"]
    assert item["attachments"][0]["name"] == "chart.png"
    assert item["attachments"][0]["disposition"] == "attachment"
    assert item["attachments"][0]["size"] == len(PNG)
    text_id = item["textBody"][0]["partId"]
    html_id = item["htmlBody"][0]["partId"]
    # 8 bytes, cut on a character: "plain ca" (é would be bytes 9-10).
    assert item["bodyValues"][text_id] == {
        "value": "plain ca", "isEncodingProblem": False, "isTruncated": True,
    }  # fmt: skip
    assert item["bodyValues"][html_id]["value"] == "<p>html "
    async with box.db.connection() as conn:
        data = await read_blob(box.email, conn, box.account_id, att["blobId"])
        assert data == PNG
        other = await make_box(mta_ctx, "carol@other.test")
        # Another account never reads this account's blobs.
        assert await read_blob(other.email, conn, other.account_id, att["blobId"]) is None


async def test_header_forms(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    email_id = await box.deliver(
        message(
            "=?utf-8?q?Caf=C3=A9?= time",
            extra={
                "List-Unsubscribe": "<mailto:leave@list.test>, <https://list.test/u?x=1>",
                "Cc": "Team: a@x.test, B <b@x.test>;, c@y.test",
                "X-Tag": "one",
            },
            date=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        ).replace(b"X-Tag: one", b"X-Tag: one\r\nX-Tag:  two\r\n folded")
    )
    props = [
        "header:Subject:asText", "header:Subject", "header:List-Unsubscribe:asURLs",
        "header:Cc:asGroupedAddresses", "header:Cc:asAddresses", "header:Date:asDate",
        "header:X-Tag:all", "header:x-tag:asText", "header:Missing", "header:Missing:all",
        "header:Message-ID:asMessageIds", "subject", "sender", "replyTo", "headers",
    ]  # fmt: skip
    (item,) = (await box.call(get.get, {"ids": [email_id], "properties": props}))["list"]
    assert item["header:Subject:asText"] == "Café time"
    assert item["header:Subject"] == " =?utf-8?q?Caf=C3=A9?= time"
    assert item["header:List-Unsubscribe:asURLs"] == [
        "mailto:leave@list.test", "https://list.test/u?x=1",
    ]  # fmt: skip
    assert item["header:Cc:asGroupedAddresses"] == [
        {"name": "Team", "addresses": [
            {"name": None, "email": "a@x.test"}, {"name": "B", "email": "b@x.test"}]},
        {"name": None, "addresses": [{"name": None, "email": "c@y.test"}]},
    ]  # fmt: skip
    assert [a["email"] for a in item["header:Cc:asAddresses"]] == [
        "a@x.test",
        "b@x.test",
        "c@y.test",
    ]
    assert item["header:Date:asDate"] == "2026-01-02T03:04:05+00:00"
    assert item["header:X-Tag:all"] == [" one", "  two\r\n folded"]
    assert item["header:x-tag:asText"] == "two folded"
    assert item["header:Missing"] is None and item["header:Missing:all"] == []
    assert item["subject"] == "Café time"
    assert item["sender"] is None and item["replyTo"] is None
    assert "Received" in [h["name"] for h in item["headers"]]  # our trace field, first
    assert item["headers"][0]["name"] == "Received"


@pytest.mark.parametrize(
    "prop",
    [
        "header:From:asDate",
        "header:Subject:asAddresses",
        "header:Bad Name",
        "header:X:asNothing",
        "nope",
    ],
)
async def test_forms_a_field_cannot_take_are_invalid_arguments(mta_ctx: MtaContext, prop: str):
    box = await make_box(mta_ctx)
    with pytest.raises(MethodError) as err:
        await box.call(get.get, {"ids": [], "properties": [prop]})
    assert err.value.type == "invalidArguments"


async def test_encoding_problems_are_flagged(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    raw = (
        b"From: x@remote.test\r\nTo: alice@example.test\r\nSubject: bad\r\n"
        b"Content-Type: text/plain; charset=x-unknown-charset\r\n\r\nhello \xff\r\n"
    )
    email_id = await box.deliver(raw)
    (item,) = (
        await box.call(
            get.get, {"ids": [email_id], "properties": ["bodyValues"], "fetchAllBodyValues": True}
        )
    )["list"]
    assert item["bodyValues"]["1"]["isEncodingProblem"] is True
    assert item["bodyValues"]["1"]["value"].startswith("hello ")


async def test_parse_an_attached_message(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    inner = message("Inner subject", "inner body", sender="Zed <zed@remote.test>")
    email_id = await box.deliver(
        message("Outer", attachments=[("fwd.eml", "message/rfc822", inner)])
    )
    (item,) = (await box.call(get.get, {"ids": [email_id], "properties": ["attachments"]}))["list"]
    blob = item["attachments"][0]["blobId"]
    assert item["attachments"][0]["type"] == "message/rfc822"
    res = await box.call(get.parse, {"blobIds": [blob, "0" * 64]})
    assert res["notFound"] == ["0" * 64]
    parsed = res["parsed"][blob]
    assert parsed["subject"] == "Inner subject"
    assert parsed["from"] == [{"name": "Zed", "email": "zed@remote.test"}]
    assert parsed["textBody"][0]["type"] == "text/plain"
