"""Email/query and Email/queryChanges: every filter condition, the sorts, threads, paging."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mta.context import MtaContext
from mta.jmap.email import query, write
from mta.jmap.email.errors import MethodError
from tests.mta.jmap_email import Box, make_box, message

PDF = b"%PDF-1.4 tiny"


async def _mailbox(mta_ctx: MtaContext) -> tuple[Box, dict[str, str]]:
    """Five messages, two of them a thread, delivered a minute apart."""
    box = await make_box(mta_ctx)
    clock = mta_ctx.runtime.clock
    ids: dict[str, str] = {}

    async def add(name: str, raw: bytes) -> None:
        clock.advance(60)  # type: ignore[attr-defined]
        ids[name] = await box.deliver(raw)

    await add("invoice", message(
        "Invoice 42", "Please pay the invoice by Friday.", sender="Billing <billing@shop.test>",
        message_id="inv@shop.test", attachments=[("invoice.pdf", "application/pdf", PDF)],
        date=datetime(2026, 1, 5, tzinfo=UTC)))  # fmt: skip
    await add("lunch", message(
        "Lunch tomorrow?", "Shall we try the new ramen place?", sender="Zoë Müller <zoe@friends.test>",
        message_id="lunch@friends.test", to="Alice <alice@example.test>, dave@example.test",
        date=datetime(2026, 1, 1, tzinfo=UTC)))  # fmt: skip
    await add("reply", message(
        "Re: Lunch tomorrow?", "Yes! Ramen at noon.", sender="Alice <alice@example.test>",
        to="zoe@friends.test", in_reply_to="lunch@friends.test", message_id="r1@example.test",
        extra={"Cc": "Carol <carol@cc.test>", "X-Priority": "1 (Highest)"},
        date=datetime(2026, 1, 2, tzinfo=UTC)))  # fmt: skip
    await add("news", message(
        "Weekly newsletter", "<p>Ten <b>links</b> about databases</p>" * 50,
        sender="News <news@letters.test>", extra={"List-Id": "<weekly.letters.test>"},
        date=datetime(2026, 1, 3, tzinfo=UTC)))  # fmt: skip
    await add("alert", message(
        "[fwd: security] alert", "Your password was changed.", sender="Security <noreply@bank.test>",
        date=datetime(2026, 1, 4, tzinfo=UTC)))  # fmt: skip
    return box, ids


async def _ids(box: Box, ids: dict[str, str], **args: Any) -> list[str]:
    names = {v: k for k, v in ids.items()}
    res = await box.call(query.query, args)
    return [names[i] for i in res["ids"]]


async def test_every_filter_condition(mta_ctx: MtaContext):
    box, ids = await _mailbox(mta_ctx)
    inbox = box.roles["inbox"]
    await box.call(write.set_emails, {"update": {
        ids["invoice"]: {"keywords/$flagged": True},
        ids["lunch"]: {"keywords/$seen": True},
        ids["reply"]: {"keywords/$seen": True, f"mailboxIds/{box.roles['archive']}": True},
    }})  # fmt: skip
    mid = (mta_ctx.runtime.clock.now() - timedelta(seconds=90)).isoformat()  # after "reply"

    async def q(filt: dict[str, Any]) -> set[str]:
        return set(await _ids(box, ids, filter=filt))

    everything = set(ids)
    assert await q({"inMailbox": inbox}) == everything
    assert await q({"inMailbox": box.roles["archive"]}) == {"reply"}
    assert await q({"inMailboxOtherThan": [inbox]}) == {"reply"}
    assert await q({"after": mid}) == {"news", "alert"}
    assert await q({"before": mid}) == {"invoice", "lunch", "reply"}
    assert await q({"minSize": 2000}) == {"news"}
    assert await q({"maxSize": 2000}) == everything - {"news"}
    assert await q({"hasKeyword": "$flagged"}) == {"invoice"}
    assert await q({"notKeyword": "$seen"}) == {"invoice", "news", "alert"}
    assert await q({"allInThreadHaveKeyword": "$seen"}) == {"lunch", "reply"}
    assert await q({"someInThreadHaveKeyword": "$flagged"}) == {"invoice"}
    assert await q({"noneInThreadHaveKeyword": "$seen"}) == {"invoice", "news", "alert"}
    assert await q({"hasAttachment": True}) == {"invoice"}
    assert await q({"text": "ramen"}) == {"lunch", "reply"}
    assert await q({"text": "carol"}) == {"reply"}  # a Cc name
    assert await q({"text": "databases"}) == {"news"}  # HTML body, tags out
    assert await q({"body": "invoice"}) == {"invoice"}
    assert await q({"subject": "invoice"}) == {"invoice"}
    assert await q({"subject": "LUNCH"}) == {"lunch", "reply"}
    assert await q({"from": "zoë"}) == {"lunch"}
    assert await q({"from": "shop.test"}) == {"invoice"}
    assert await q({"from": "bill"}) == {"invoice"}  # a word prefix
    assert await q({"from": "Billing@Shop.TEST"}) == {"invoice"}  # a whole address
    assert await q({"from": "billing@shop"}) == {"invoice"}  # part of one: words
    assert await q({"to": "dave@"}) == {"lunch"}
    assert await q({"cc": "carol@cc"}) == {"reply"}
    assert await q({"bcc": "x"}) == set()
    assert await q({"header": ["X-Priority"]}) == {"reply"}
    assert await q({"header": ["list-id", "weekly.letters"]}) == {"news"}
    assert await q({"header": ["List-Id", "monthly"]}) == set()
    assert await q({"text": "100%_"}) == set()
    # Operators.
    assert await q(
        {"operator": "OR", "conditions": [{"from": "zoe"}, {"hasKeyword": "$flagged"}]}
    ) == {"lunch", "invoice"}
    assert await q(
        {
            "operator": "NOT",
            "conditions": [{"inMailbox": box.roles["archive"]}, {"hasAttachment": True}],
        }
    ) == {"lunch", "news", "alert"}
    assert await q(
        {
            "operator": "AND",
            "conditions": [
                {"inMailbox": inbox},
                {"operator": "NOT", "conditions": [{"text": "ramen"}]},
            ],
        }
    ) == {"invoice", "news", "alert"}
    # Another account's mailbox id finds nothing.
    other = await make_box(mta_ctx, "eve@evil.test")
    res = await other.call(query.query, {"filter": {"inMailbox": inbox}})
    assert res["ids"] == []


async def test_sorts_and_tie_breaks(mta_ctx: MtaContext):
    box, ids = await _mailbox(mta_ctx)
    assert await _ids(box, ids) == ["alert", "news", "reply", "lunch", "invoice"]
    assert await _ids(box, ids, sort=[{"property": "receivedAt", "isAscending": True}]) == [
        "invoice", "lunch", "reply", "news", "alert"]  # fmt: skip
    assert await _ids(box, ids, sort=[{"property": "sentAt"}]) == [
        "lunch", "reply", "news", "alert", "invoice"]  # fmt: skip
    assert (await _ids(box, ids, sort=[{"property": "size", "isAscending": False}]))[0] == "news"
    assert await _ids(box, ids, sort=[{"property": "from"}]) == [
        "reply", "invoice", "news", "alert", "lunch"]  # fmt: skip
    # Base subject: "Re:" and "[fwd: ...]" do not count.
    assert await _ids(box, ids, sort=[{"property": "subject"}, {"property": "receivedAt"}]) == [
        "alert", "invoice", "lunch", "reply", "news"]  # fmt: skip
    await box.call(write.set_emails, {"update": {ids["news"]: {"keywords": {"$flagged": True}}}})
    flagged_first = await _ids(box, ids, sort=[
        {"property": "hasKeyword", "keyword": "$flagged", "isAscending": False},
        {"property": "receivedAt", "isAscending": False}])  # fmt: skip
    assert flagged_first == ["news", "alert", "reply", "lunch", "invoice"]
    await box.call(write.set_emails, {"update": {ids["lunch"]: {"keywords": {"$flagged": True}}}})
    some = await _ids(box, ids, filter={"inMailbox": box.roles["inbox"]}, sort=[
        {"property": "someInThreadHaveKeyword", "keyword": "$flagged", "isAscending": False},
        {"property": "receivedAt", "isAscending": True}])  # fmt: skip
    assert some == ["lunch", "reply", "news", "invoice", "alert"]
    with pytest.raises(MethodError) as err:
        await box.call(query.query, {"sort": [{"property": "color"}]})
    assert err.value.type == "unsupportedSort"
    with pytest.raises(MethodError) as err:
        await box.call(query.query, {"filter": {"colour": "red"}})
    assert err.value.type == "unsupportedFilter"


async def test_collapse_threads_paging_anchor_and_total(mta_ctx: MtaContext):
    box, ids = await _mailbox(mta_ctx)
    inbox = {"inMailbox": box.roles["inbox"]}
    collapsed = await _ids(box, ids, filter=inbox, collapseThreads=True)
    assert collapsed == ["alert", "news", "reply", "invoice"]  # lunch folded into reply
    collapsed_asc = await _ids(box, ids, filter=inbox, collapseThreads=True,
                               sort=[{"property": "receivedAt", "isAscending": True}])  # fmt: skip
    assert collapsed_asc == ["invoice", "lunch", "news", "alert"]
    # Only the matching mail of a thread takes part: with "yes" only the reply matches.
    assert await _ids(box, ids, filter={"text": "noon"}, collapseThreads=True) == ["reply"]
    # Words and a mailbox (the word index drives), collapsed and counted.
    words_in_inbox = {"operator": "AND", "conditions": [inbox, {"text": "ramen"}]}
    res = await box.call(
        query.query, {"filter": words_in_inbox, "collapseThreads": True, "calculateTotal": True}
    )
    assert res["ids"] == [ids["reply"]] and res["total"] == 1
    res = await box.call(query.query, {"filter": words_in_inbox, "calculateTotal": True})
    assert res["ids"] == [ids["reply"], ids["lunch"]] and res["total"] == 2
    res = await box.call(query.query, {"filter": inbox, "collapseThreads": True,
                                       "position": 1, "limit": 2, "calculateTotal": True})  # fmt: skip
    assert res["total"] == 4 and res["position"] == 1 and len(res["ids"]) == 2
    res = await box.call(query.query, {"filter": inbox, "calculateTotal": True, "position": -2})
    assert res["total"] == 5 and res["position"] == 3
    assert [ids["lunch"], ids["invoice"]] == res["ids"]
    res = await box.call(query.query, {"anchor": ids["reply"], "anchorOffset": -1, "limit": 2})
    assert res["position"] == 1 and res["ids"] == [ids["news"], ids["reply"]]
    with pytest.raises(MethodError) as err:
        await box.call(query.query, {"anchor": "00000000-0000-0000-0000-000000000000"})
    assert err.value.type == "anchorNotFound"
    box.email.max_query_limit = 2
    res = await box.call(query.query, {"limit": 10})
    assert res["limit"] == 2 and len(res["ids"]) == 2
    # Totals are remembered per state: a change gives a fresh count.
    await box.call(write.set_emails, {"destroy": [ids["lunch"]]})
    for collapse in (False, True):
        res = await box.call(
            query.query,
            {"filter": words_in_inbox, "calculateTotal": True, "collapseThreads": collapse},
        )
        assert res["ids"] == [ids["reply"]] and res["total"] == 1
    for collapse in (False, True):  # five emails in four threads before
        res = await box.call(
            query.query, {"filter": inbox, "calculateTotal": True, "collapseThreads": collapse}
        )
        assert res["total"] == 4


async def test_query_changes_replays_onto_the_old_results(mta_ctx: MtaContext):
    box, ids = await _mailbox(mta_ctx)
    args = {"filter": {"inMailbox": box.roles["inbox"]}, "collapseThreads": True}
    before = await box.call(query.query, args)
    old = list(before["ids"])
    # A new reply in the lunch thread, the alert destroyed, the invoice moved out.
    mta_ctx.runtime.clock.advance(60)  # type: ignore[attr-defined]
    new_id = await box.deliver(
        message("Re: Lunch tomorrow?", "see you", in_reply_to="lunch@friends.test")
    )
    await box.call(write.set_emails, {
        "destroy": [ids["alert"]],
        "update": {ids["invoice"]: {"mailboxIds": {box.roles["archive"]: True}}},
    })  # fmt: skip
    res = await box.call(
        query.query_changes,
        {**args, "sinceQueryState": before["queryState"], "calculateTotal": True},
    )
    assert (
        res["oldQueryState"] == before["queryState"]
        and res["newQueryState"] != before["queryState"]
    )
    replayed = [i for i in old if i not in set(res["removed"])]
    for item in res["added"]:
        replayed.insert(item["index"], item["id"])
    now = (await box.call(query.query, args))["ids"]
    assert replayed == now == [new_id, ids["news"]]
    assert res["total"] == 2
    unchanged = await box.call(
        query.query_changes, {**args, "sinceQueryState": res["newQueryState"]}
    )
    assert unchanged["removed"] == [] and unchanged["added"] == []
    with pytest.raises(MethodError) as err:
        await box.call(query.query_changes, {**args, "sinceQueryState": "999999999"})
    assert err.value.type == "cannotCalculateChanges"


async def test_mail_stored_before_the_body_index_is_indexed_by_the_job(mta_ctx: MtaContext):
    from mta.jmap.email.backlog import index_bodies

    box = await make_box(mta_ctx)
    old = await box.deliver(message("Old", "an archived zeppelin story"))
    # As a message delivered before migration 0020 is left by 0103: no words, queued unparsed.
    await box.db.execute("DELETE FROM mta.email_words WHERE email_id = %s", (old,))
    await box.db.execute("INSERT INTO mta.words_backlog (email_id) VALUES (%s)", (old,))
    assert (await box.call(query.query, {"filter": {"body": "zeppelin"}}))["ids"] == []
    async with box.db.connection() as conn:
        assert await index_bodies(conn, box.ctx.blobs) == 1
        assert await index_bodies(conn, box.ctx.blobs) == 0
    assert (await box.call(query.query, {"filter": {"body": "zeppelin"}}))["ids"] == [old]


async def test_delivered_mail_is_found_by_its_body_before_and_after_the_words_job(
    mta_ctx: MtaContext,
):
    """docs/mail.md ("JMAP Email semantics"): the words job moves no search result."""
    from mta.jmap.email.backlog import index_bodies

    box = await make_box(mta_ctx)
    other = await make_box(mta_ctx, "bob@elsewhere.test")
    known = await box.deliver(message("Zeppelin weekly", "nothing about airships here"))
    new = await box.deliver(
        message("Harbour news", "a zeppelin over the harbour at dawn"), index=False
    )
    # Another account's queued mail with the same word is not this account's result.
    await other.deliver(message("Elsewhere", "a zeppelin for bob"), index=False)
    searches: list[dict[str, Any]] = [
        {"body": "zeppelin"},
        {"text": "zeppelin"},
        {"text": "harbour"},
        {"body": "airships"},
        {"operator": "NOT", "conditions": [{"body": "zeppelin"}]},
        {"operator": "OR", "conditions": [{"body": "dawn"}, {"subject": "weekly"}]},
    ]

    async def found() -> list[set[str]]:
        return [set((await box.call(query.query, {"filter": f}))["ids"]) for f in searches]

    expected = [{new}, {known, new}, {new}, {known}, {known}, {known, new}]
    # Queued: the commit enqueued the job for the second it committed in.
    assert await box.db.fetch_val("SELECT count(*) FROM mta.words_backlog") == 2
    jobs = await box.db.fetch_all(
        "SELECT key FROM common.jobs WHERE kind = 'mta.index_bodies' AND state = 'pending'"
    )
    assert len(jobs) == 1 and jobs[0]["key"].startswith("every:mta.index_bodies@1s:")
    assert await found() == expected

    async with box.db.connection() as conn:
        assert await index_bodies(conn, box.ctx.blobs) == 2
    assert await box.db.fetch_val("SELECT count(*) FROM mta.words_backlog") == 0
    assert (
        await box.db.fetch_val("SELECT count(*) FROM mta.email_words WHERE email_id = %s", (new,))
        == 1
    )
    assert await found() == expected


async def test_a_destroyed_email_leaves_nothing_for_the_words_job(mta_ctx: MtaContext):
    from mta.jmap.email.backlog import index_bodies

    box = await make_box(mta_ctx)
    gone = await box.deliver(message("Soon gone", "a zeppelin"), index=False)
    await box.call(write.set_emails, {"destroy": [gone]})
    assert await box.db.fetch_val("SELECT count(*) FROM mta.words_backlog") == 0
    async with box.db.connection() as conn:
        assert await index_bodies(conn, box.ctx.blobs) == 0
