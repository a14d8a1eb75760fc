"""The per-mailbox thread counts (mta.mailbox_threads, migration 0060): kept by
the membership triggers through delivery, moves, $seen, destroy and import, and
served as Mailbox totalThreads/unreadThreads and the collapseThreads total."""

from __future__ import annotations

from common.db import fetch_all
from mta.context import MtaContext
from mta.jmap import mailbox
from mta.jmap.email import query, write
from tests.mta.jmap_email import Box, make_box, message


async def _threads(box: Box) -> dict[str, tuple[int, int]]:
    """(totalThreads, unreadThreads) by role, as Mailbox/get reports them; and the
    kept rows checked against the memberships counted from scratch."""
    mailbox.THREAD_COUNTS.clear()  # read from the kept rows, not remembered
    async with box.db.connection() as conn:
        rows = await mailbox._rows(conn, box.account_id, threads=True)
        kept = await fetch_all(
            conn,
            "SELECT mailbox_id::text, thread_id::text, emails, unread FROM mta.mailbox_threads"
            " ORDER BY 1, 2",
        )
        truth = await fetch_all(
            conn,
            "SELECT mailbox_id::text, thread_id::text, count(*) AS emails,"
            " count(*) FILTER (WHERE NOT seen) AS unread FROM mta.email_mailboxes"
            " GROUP BY 1, 2 ORDER BY 1, 2",
        )
    assert kept == truth
    return {r["role"]: (r["total_threads"], r["unread_threads"]) for r in rows if r["role"]}


async def _collapsed_total(box: Box, role: str) -> int:
    query._TOTALS.clear()  # counted, not remembered
    res = await box.call(query.query, {
        "filter": {"inMailbox": box.roles[role]}, "collapseThreads": True, "calculateTotal": True,
    })  # fmt: skip
    assert res["total"] == len(
        (await box.call(query.query, {"filter": {"inMailbox": box.roles[role]}, "collapseThreads": True}))["ids"]
    )  # fmt: skip
    return int(res["total"])


async def test_thread_counts_follow_delivery_replies_seen_moves_and_destroy(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    plan = await box.deliver(message("Plans", message_id="plan@remote.test"))
    reply = await box.deliver(message("Re: Plans", in_reply_to="plan@remote.test"))
    other = await box.deliver(message("Lunch", message_id="lunch@remote.test"))
    # A reply joins its thread: three emails, two threads, both unread.
    assert (await _threads(box))["inbox"] == (2, 2)
    assert await _collapsed_total(box, "inbox") == 2
    # $seen on one email of a thread leaves the thread unread while the reply is not.
    await box.call(write.set_emails, {"update": {plan: {"keywords/$seen": True}}})
    assert (await _threads(box))["inbox"] == (2, 2)
    await box.call(write.set_emails, {"update": {reply: {"keywords/$seen": True}}})
    assert (await _threads(box))["inbox"] == (2, 1)
    # A move takes the thread out of one mailbox and into another.
    await box.call(
        write.set_emails, {"update": {other: {"mailboxIds": {box.roles["archive"]: True}}}}
    )
    counts = await _threads(box)
    assert counts["inbox"] == (1, 0) and counts["archive"] == (1, 1)
    assert await _collapsed_total(box, "inbox") == 1
    assert await _collapsed_total(box, "archive") == 1
    # In two mailboxes at once: counted in each.
    await box.call(
        write.set_emails, {"update": {reply: {f"mailboxIds/{box.roles['trash']}": True}}}
    )
    counts = await _threads(box)
    assert counts["inbox"] == (1, 0) and counts["trash"] == (1, 0)
    # Destroying one email of a thread keeps the thread; the last one takes it.
    await box.call(write.set_emails, {"destroy": [reply]})
    counts = await _threads(box)
    assert counts["inbox"] == (1, 0) and counts["trash"] == (0, 0)
    await box.call(write.set_emails, {"destroy": [plan]})
    assert (await _threads(box))["inbox"] == (0, 0)
    assert await _collapsed_total(box, "inbox") == 0


async def test_thread_counts_follow_import_into_a_thread_and_mailbox_removal(mta_ctx: MtaContext):
    box = await make_box(mta_ctx)
    other = await make_box(mta_ctx, "mallory@other.test")
    await other.deliver(message("Elsewhere"))
    await box.deliver(message("Report", message_id="report@remote.test"))
    uploads = {
        "b1": message("Re: Report", in_reply_to="report@remote.test"),
        "b2": message("Old news", message_id="old@archive.test"),
    }

    async def read(account_id: str, blob_id: str) -> bytes | None:
        return uploads.get(blob_id)

    box.email.uploads = read
    res = await box.call(write.import_emails, {"emails": {
        "i1": {"blobId": "b1", "mailboxIds": {box.roles["inbox"]: True}},
        "i2": {"blobId": "b2", "mailboxIds": {box.roles["archive"]: True}, "keywords": {"$seen": True}},
    }})  # fmt: skip
    assert set(res["created"]) == {"i1", "i2"}
    counts = await _threads(box)
    assert counts["inbox"] == (1, 1) and counts["archive"] == (1, 0)
    # The other account's mailbox counts its own thread only, and its total is
    # not served for this account's mailbox id.
    assert (await _threads(other))["inbox"] == (1, 1)
    query._TOTALS.clear()
    res = await other.call(query.query, {
        "filter": {"inMailbox": box.roles["inbox"]}, "collapseThreads": True, "calculateTotal": True,
    })  # fmt: skip
    assert res["total"] == 0 and res["ids"] == []
    # Removing the memberships of a whole mailbox (as Mailbox/set destroy does) empties it.
    async with box.db.transaction() as conn:
        await fetch_all(
            conn,
            "DELETE FROM mta.email_mailboxes WHERE mailbox_id = %s RETURNING email_id",
            (box.roles["archive"],),
        )
    assert (await _threads(box))["archive"] == (0, 0)
