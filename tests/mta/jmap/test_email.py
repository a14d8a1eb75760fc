"""The Email methods through the real HTTP API, driven by jmapc (RFC 8621 4, 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jmapc
from jmapc import Comparator
from jmapc.methods import (
    CustomMethod,
    EmailChanges,
    EmailGet,
    EmailQuery,
    EmailQueryChanges,
    EmailSet,
    SearchSnippetGet,
)
from jmapc.models import (
    Email,
    EmailAddress,
    EmailBodyPart,
    EmailBodyValue,
    EmailQueryFilterCondition,
    EmailQueryFilterOperator,
    Operator,
)

from mta.context import MtaContext
from tests.mta.jmap.conftest import Mailbox, Server, run
from tests.mta.jmap_email import Box, make_box, message

MAIL_URN = "urn:ietf:params:jmap:mail"


async def _box(mta_ctx: MtaContext, who: Mailbox, count: int = 0) -> tuple[Box, list[str]]:
    box = await make_box(mta_ctx, who.email, who.address_id)
    ids = []
    for i in range(count):
        mta_ctx.runtime.clock.advance(60)  # type: ignore[attr-defined]
        sender = ["Ann <ann@a.test>", "Ben <ben@b.test>", "Cy <cy@c.test>"][i % 3]
        ids.append(
            await box.deliver(
                message(f"Note {i}", f"Body number {i} about topic{i % 2}", sender=sender)
            )
        )
    return box, ids


async def test_query_with_filters_sort_and_paging(
    jmap_server: Server, alice: Mailbox, mta_ctx: MtaContext
) -> None:
    box, ids = await _box(mta_ctx, alice, 7)
    client = jmap_server.client(alice.email)
    inbox = box.roles["inbox"]
    first = await run(client.request, EmailQuery(
        filter=EmailQueryFilterCondition(in_mailbox=inbox), sort=[Comparator("receivedAt", is_ascending=False)],
        limit=3, calculate_total=True))  # fmt: skip
    assert first.ids == list(reversed(ids))[:3] and first.total == 7 and first.position == 0
    second = await run(client.request, EmailQuery(
        filter=EmailQueryFilterCondition(in_mailbox=inbox), sort=[Comparator("receivedAt", is_ascending=False)],
        position=3, limit=3))  # fmt: skip
    assert second.ids == list(reversed(ids))[3:6]
    from_ben = await run(
        client.request, EmailQuery(filter=EmailQueryFilterCondition(mail_from="ben"))
    )
    assert set(from_ben.ids) == {ids[1], ids[4]}
    topic = await run(client.request, EmailQuery(filter=EmailQueryFilterOperator(
        operator=Operator.AND, conditions=[EmailQueryFilterCondition(text="topic1"),
                                           EmailQueryFilterCondition(mail_from="ann")])))  # fmt: skip
    assert topic.ids == [ids[3]]
    # Email/get behind a back-reference to the query's ids.
    results = await run(client.request, [
        EmailQuery(filter=EmailQueryFilterCondition(mail_from="cy"), sort=[Comparator("receivedAt")]),
        EmailGet(ids=jmapc.Ref("/ids"), properties=["subject", "from", "preview"]),
    ])  # fmt: skip
    got = results[1].response.data
    assert [e.subject for e in got] == ["Note 2", "Note 5"]
    assert got[0].mail_from[0].email == "cy@c.test"
    assert got[0].preview == "Body number 2 about topic0"
    snippets = await run(client.request, SearchSnippetGet(
        ids=[ids[3]], filter=EmailQueryFilterCondition(text="topic1")))  # fmt: skip
    assert snippets.data[0].preview == "Body number 3 about <mark>topic1</mark>"


async def test_set_keywords_and_move_then_changes(
    jmap_server: Server, alice: Mailbox, mta_ctx: MtaContext
) -> None:
    box, ids = await _box(mta_ctx, alice, 3)
    client = jmap_server.client(alice.email)
    state = (await run(client.request, EmailGet(ids=[]))).state
    query = EmailQuery(filter=EmailQueryFilterCondition(in_mailbox=box.roles["inbox"]))
    before = await run(client.request, query)
    res = await run(client.request, EmailSet(if_in_state=state, update={
        ids[0]: {"keywords/$seen": True, "keywords/$flagged": True},
        ids[1]: {f"mailboxIds/{box.roles['inbox']}": None, f"mailboxIds/{box.roles['archive']}": True},
    }))  # fmt: skip
    assert set(res.updated or {}) == {ids[0], ids[1]} and not res.not_updated
    got = await run(client.request, EmailGet(ids=ids[:2], properties=["keywords", "mailboxIds"]))
    assert got.data[0].keywords == {"$seen": True, "$flagged": True}
    assert got.data[1].mailbox_ids == {box.roles["archive"]: True}
    changes = await run(client.request, EmailChanges(since_state=state, max_changes=1))
    assert changes.has_more_changes and len(changes.updated) == 1
    rest = await run(client.request, EmailChanges(since_state=changes.new_state))
    assert set(changes.updated + rest.updated) == {ids[0], ids[1]} and not rest.has_more_changes
    moved = await run(client.request, EmailQueryChanges(
        filter=EmailQueryFilterCondition(in_mailbox=box.roles["inbox"]), since_query_state=before.query_state))  # fmt: skip
    assert ids[1] in moved.removed and ids[1] not in [a.id for a in moved.added]
    # A stale ifInState is refused as a method error.
    stale = await run(
        client.request,
        EmailSet(if_in_state=state, update={ids[2]: {"keywords": {}}}),
        raise_errors=False,
    )
    assert getattr(stale, "type", None) == "stateMismatch"


async def test_upload_import_download_and_destroy(
    jmap_server: Server, alice: Mailbox, mta_ctx: MtaContext, tmp_path: Path
) -> None:
    box, _ = await _box(mta_ctx, alice)
    client = jmap_server.client(alice.email)
    pdf = b"%PDF-1.4 " + bytes(range(256)) * 4
    raw = message(
        "Imported over JMAP",
        "hello from an old archive",
        attachments=[("a.pdf", "application/pdf", pdf)],
    )
    path = tmp_path / "old.eml"
    path.write_bytes(raw)
    blob = await run(client.upload_blob, path)
    call = CustomMethod(data={"accountId": alice.address_id, "emails": {"i1": {
        "blobId": blob.id, "mailboxIds": {box.roles["archive"]: True}, "keywords": {"$seen": True}}}})  # fmt: skip
    call.jmap_method = "Email/import"
    call.using = {MAIL_URN}
    imported: Any = await run(client.request, call)
    made = imported.data["created"]["i1"]
    assert made["size"] == len(raw) and made["blobId"] == blob.id
    got = (
        await run(
            client.request,
            EmailGet(ids=[made["id"]], properties=["subject", "attachments", "keywords"]),
        )
    ).data[0]
    assert got.subject == "Imported over JMAP" and got.keywords == {"$seen": True}
    part = got.attachments[0]
    assert part.type == "application/pdf" and part.name == "a.pdf"
    out = tmp_path / "a.pdf"
    await run(client.download_attachment, part, out)
    assert out.read_bytes() == pdf
    gone = await run(client.request, EmailSet(destroy=[made["id"]]))
    assert gone.destroyed == [made["id"]]
    assert (await run(client.request, EmailGet(ids=[made["id"]]))).not_found == [made["id"]]


async def test_create_a_draft_and_read_it_back_in_one_request(
    jmap_server: Server, alice: Mailbox, mta_ctx: MtaContext
) -> None:
    box, _ = await _box(mta_ctx, alice)
    client = jmap_server.client(alice.email)
    draft = Email(
        mailbox_ids={box.roles["drafts"]: True},
        keywords={"$draft": True},
        mail_from=[EmailAddress(name="Alice", email=alice.email)],
        to=[EmailAddress(name="Bob", email="bob@remote.test")],
        subject="Agenda for Monday",
        text_body=[EmailBodyPart(part_id="body", type="text/plain")],
        body_values={"body": EmailBodyValue(value="1. Budget\n2. Hiring\n")},
    )
    results = await run(client.request, [
        EmailSet(create={"draft": draft}),
        EmailGet(ids=["#draft"], properties=["subject", "to", "keywords", "mailboxIds", "bodyValues"],
                 fetch_text_body_values=True),
    ])  # fmt: skip
    created = results[0].response.created["draft"]
    got = results[1].response.data[0]
    assert got.id == created.id and got.subject == "Agenda for Monday"
    assert got.to[0].email == "bob@remote.test" and got.keywords == {"$draft": True}
    assert got.mailbox_ids == {box.roles["drafts"]: True}
    assert "2. Hiring" in next(iter(got.body_values.values())).value
    # The draft is found by its words, then destroyed.
    found = await run(client.request, EmailQuery(filter=EmailQueryFilterCondition(body="hiring")))
    assert found.ids == [created.id]
    gone = await run(client.request, EmailSet(destroy=[created.id]))
    assert gone.destroyed == [created.id]
