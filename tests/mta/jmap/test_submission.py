"""EmailSubmission (RFC 8621 7) driven by jmapc: a draft leaves through the outbound
queue, signed, to a loopback receiver found by MX; vacation replies take the same road."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import pytest
import requests
from jmapc.methods import (
    EmailGet,
    EmailSet,
    EmailSubmissionChanges,
    EmailSubmissionGet,
    EmailSubmissionQuery,
    EmailSubmissionQueryChanges,
    EmailSubmissionSet,
    IdentityGet,
)
from jmapc.models import (
    Address,
    Email,
    EmailAddress,
    EmailBodyPart,
    EmailBodyValue,
    EmailSubmission,
    EmailSubmissionQueryFilterCondition,
    Envelope,
)

from common.runtime import Runtime
from mta.context import MtaContext
from mta.outbound.worker import OutboundWorker
from mta.settings import MtaSettings
from tests.mta import sending
from tests.mta.conftest import send
from tests.mta.dnsserver import LoopbackDNS
from tests.mta.jmap.conftest import Mailbox, Server, run
from tests.mta.jmap.test_vacation_identity import enable, mail
from tests.mta.jmap_email import Box, make_box
from tests.mta.sending import ReceiverHandler
from tests.mta.test_billing_smtp import use_plans
from tests.mta.test_outbound_delivery import dkim_verify

SUBMISSION = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:submission"]


@pytest.fixture
async def remote(dns_server: LoopbackDNS) -> AsyncIterator[tuple[ReceiverHandler, int]]:
    async with sending.receiver() as (handler, port):
        sending.mx(dns_server, "remote.test")
        yield handler, port


@pytest.fixture
async def worker(
    runtime: Runtime, mta_config: MtaSettings, remote: tuple[ReceiverHandler, int]
) -> AsyncIterator[OutboundWorker]:
    config = replace(mta_config, outbound_smtp_port=remote[1], mta_sts=False)
    w = OutboundWorker(MtaContext.build(runtime, config))
    yield w
    await w.close()


@pytest.fixture
async def box(
    mta_ctx: MtaContext, alice: Mailbox, runtime: Runtime, dns_server: LoopbackDNS
) -> Box:
    signer = sending.Sender(alice.account_id, alice.domain_id, alice.address_id, alice.email)
    await sending.dkim_key(runtime, dns_server, signer, "rsa-sha256", "jmap2030")
    return await make_box(mta_ctx, alice.email, alice.address_id)


def draft(box: Box, sender: str, **kw: Any) -> Email:
    return Email(
        mailbox_ids={box.roles["drafts"]: True},
        keywords={"$draft": True, "$seen": True},
        mail_from=[EmailAddress(name="Alice", email=sender)],
        to=[EmailAddress(name="Bob", email="bob@remote.test")],
        subject="Agenda for Monday",
        text_body=[EmailBodyPart(part_id="body", type="text/plain")],
        body_values={"body": EmailBodyValue(value="1. Budget\n2. Hiring\n")},
        **kw,
    )


async def identity_id(server: Server, who: Mailbox) -> str:
    got = await run(server.client(who.email).request, IdentityGet())
    return str(got.data[0].id)


async def test_a_draft_is_sent_signed_moved_to_sent_and_reported_delivered(
    jmap_server: Server,
    alice: Mailbox,
    box: Box,
    worker: OutboundWorker,
    remote: tuple[ReceiverHandler, int],
    dns_server: LoopbackDNS,
) -> None:
    client = jmap_server.client(alice.email)
    ident = await identity_id(jmap_server, alice)
    before = (await run(client.request, EmailSubmissionGet(ids=[]))).state
    message = draft(box, alice.email, bcc=[EmailAddress(email="carol@remote.test")])
    results = await run(client.request, [
        EmailSet(create={"d": message}),
        EmailSubmissionSet(
            create={"s": EmailSubmission(identity_id=ident, email_id="#d")},
            on_success_update_email={
                "#s": {
                    f"mailboxIds/{box.roles['drafts']}": None,
                    f"mailboxIds/{box.roles['sent']}": True,
                    "keywords/$draft": None,
                }
            },
        ),
    ])  # fmt: skip
    email_id = results[0].response.created["d"].id
    made = results[1].response.created["s"]
    assert made.undo_status.value == "final"
    # The implicit Email/set of onSuccessUpdateEmail answers with the same call id.
    assert len(results) == 3 and results[2].id == results[1].id
    assert results[2].response.updated == {email_id: None}
    moved = (await run(client.request, EmailGet(ids=[email_id]))).data[0]
    assert moved.mailbox_ids == {box.roles["sent"]: True}
    assert moved.keywords == {"$seen": True}

    assert await worker.drain() == 2
    handler, _ = remote
    by_rcpt = {m.rcpts[0]: m for m in handler.messages}
    assert sorted(by_rcpt) == ["bob@remote.test", "carol@remote.test"]
    got = by_rcpt["bob@remote.test"]
    assert got.message["Subject"] == "Agenda for Monday" and got.message["Bcc"] is None
    assert b"carol@remote.test" not in got.data  # the Bcc recipient is not disclosed
    assert "dkim=pass" in dkim_verify(dns_server, got.data)

    status = (await run(client.request, EmailSubmissionGet(ids=[made.id]))).data[0]
    assert (status.email_id, status.undo_status.value) == (email_id, "final")
    assert status.envelope.mail_from.email == alice.email
    assert sorted(status.delivery_status) == ["bob@remote.test", "carol@remote.test"]
    for rcpt in status.delivery_status.values():
        assert rcpt.delivered.value == "yes" and rcpt.smtp_reply.startswith("250")
    # The state moved when the queue delivered: /changes shows the submission.
    changes = await run(client.request, EmailSubmissionChanges(since_state=before))
    assert changes.created == [made.id]
    query = await run(client.request, EmailSubmissionQuery())
    assert query.ids == [made.id]


async def test_an_address_sends_only_as_itself(
    jmap_server: Server, alice: Mailbox, box: Box, worker: OutboundWorker
) -> None:
    client = jmap_server.client(alice.email)
    ident = await identity_id(jmap_server, alice)
    made = await run(
        client.request,
        EmailSet(create={"a": draft(box, "boss@example.test"), "b": draft(box, alice.email)}),
    )
    forged, honest = made.created["a"].id, made.created["b"].id
    result = await run(client.request, EmailSubmissionSet(create={
        "from": EmailSubmission(identity_id=ident, email_id=forged),
        "envelope": EmailSubmission(identity_id=ident, email_id=honest, envelope=Envelope(
            mail_from=Address(email="boss@example.test"),
            rcpt_to=[Address(email="bob@remote.test")])),
        "nobody": EmailSubmission(identity_id=ident, email_id=honest, envelope=Envelope(
            mail_from=Address(email=alice.email), rcpt_to=[])),
        "identity": EmailSubmission(identity_id="nope", email_id=honest),
    }))  # fmt: skip
    assert result.created is None
    errors = {k: v.type for k, v in result.not_created.items()}
    assert errors == {
        "from": "forbiddenFrom",
        "envelope": "forbiddenMailFrom",
        "nobody": "noRecipients",
        "identity": "invalidProperties",
    }
    assert await worker.drain() == 0  # nothing was queued


async def test_recipients_are_checked_as_on_every_sending_path(
    jmap_server: Server, alice: Mailbox, box: Box, runtime: Runtime
) -> None:
    """.test names pass (RFC 6761 6.2); invalidRecipients lists the refused ones and
    its description says why (common/recipients.py, shared by every sending path)."""
    client = jmap_server.client(alice.email)
    ident = await identity_id(jmap_server, alice)
    message = draft(box, alice.email, cc=[EmailAddress(email="ops@test")])
    message.to = [EmailAddress(name="Rx", email="x@receiver.test")]
    made = await run(client.request, EmailSet(create={"d": message}))
    email_id = made.created["d"].id
    refused = Envelope(
        mail_from=Address(email=alice.email),
        rcpt_to=[Address(email="x@host.invalid"), Address(email="a..b@remote.test"),
                 Address(email="bob@remote.test")],
    )  # fmt: skip
    result = await run(client.request, EmailSubmissionSet(create={
        "ok": EmailSubmission(identity_id=ident, email_id=email_id),
        "bad": EmailSubmission(identity_id=ident, email_id=email_id, envelope=refused),
    }))  # fmt: skip
    assert result.created is not None and "ok" in result.created
    error = result.not_created["bad"]
    assert error.type == "invalidRecipients"
    assert "x@host.invalid: .invalid names are reserved never to exist (RFC 6761 6.4)" in (
        error.description or ""
    )
    assert "a..b@remote.test: " in (error.description or "")
    rows = await runtime.db.fetch_all(
        "SELECT rcpt FROM mta.outbound_recipients ORDER BY message_id, position"
    )
    assert [r["rcpt"] for r in rows] == ["x@receiver.test", "ops@test"]


async def test_the_plans_monthly_sends_refuse_a_submission_past_them(
    jmap_server: Server, alice: Mailbox, box: Box, worker: OutboundWorker, runtime: Runtime
) -> None:
    """EmailSubmission counts against sends_per_month, as submission and the API do."""
    await use_plans(runtime.db, runtime.clock)  # the default plan allows 2 sends a month
    client = jmap_server.client(alice.email)
    ident = await identity_id(jmap_server, alice)
    made = await run(client.request, EmailSet(create={"d": draft(box, alice.email)}))
    email_id = made.created["d"].id
    answers = []
    for _ in range(3):
        result = await run(client.request, EmailSubmissionSet(create={
            "s": EmailSubmission(identity_id=ident, email_id=email_id)
        }))  # fmt: skip
        answers.append("created" if result.created else result.not_created["s"].type)
    assert answers == ["created", "created", "forbiddenToSend"]
    assert await worker.drain() == 2


async def test_a_held_submission_is_pending_and_can_be_canceled(
    jmap_server: Server,
    alice: Mailbox,
    box: Box,
    worker: OutboundWorker,
    remote: tuple[ReceiverHandler, int],
    runtime: Runtime,
) -> None:
    client = jmap_server.client(alice.email)
    ident = await identity_id(jmap_server, alice)
    email_id = (
        (await run(client.request, EmailSet(create={"d": draft(box, alice.email)}))).created["d"].id
    )
    hold = Envelope(
        mail_from=Address(email=alice.email, parameters={"HOLDFOR": "3600"}),
        rcpt_to=[Address(email="bob@remote.test")],
    )
    made = await run(client.request, EmailSubmissionSet(create={
        "s": EmailSubmission(identity_id=ident, email_id=email_id, envelope=hold)
    }))  # fmt: skip
    sub = made.created["s"]
    assert sub.undo_status.value == "pending"
    got = (await run(client.request, EmailSubmissionGet(ids=[sub.id]))).data[0]
    assert got.undo_status.value == "pending"
    assert got.delivery_status["bob@remote.test"].delivered.value == "queued"
    assert await worker.drain() == 0  # not due yet

    canceled = await run(
        client.request, EmailSubmissionSet(update={sub.id: {"undoStatus": "canceled"}})
    )
    assert canceled.updated == {sub.id: None}
    got = (await run(client.request, EmailSubmissionGet(ids=[sub.id]))).data[0]
    assert got.undo_status.value == "canceled"
    runtime.clock.advance(hours=2)  # type: ignore[attr-defined]
    assert await worker.drain() == 0
    assert remote[0].messages == []
    # A sent one cannot be unsent.
    now_sent = await run(client.request, EmailSubmissionSet(create={
        "n": EmailSubmission(identity_id=ident, email_id=email_id)
    }))  # fmt: skip
    late = now_sent.created["n"].id
    refused = await run(
        client.request, EmailSubmissionSet(update={late: {"undoStatus": "canceled"}})
    )
    assert refused.not_updated[late].type == "cannotUnsend"


async def test_session_advertises_submission(jmap_server: Server, alice: Mailbox) -> None:
    response = await run(
        requests.get,
        f"{jmap_server.url}/.well-known/jmap",
        headers={"Authorization": alice.basic},
        timeout=10,
    )
    caps = response.json()["accounts"][alice.address_id]["accountCapabilities"]
    sub = caps["urn:ietf:params:jmap:submission"]
    assert sub["maxDelayedSend"] == 30 * 24 * 3600
    assert sub["submissionExtensions"] == {"FUTURERELEASE": [str(30 * 24 * 3600)]}


async def test_a_vacation_reply_reaches_the_sender(
    jmap_server: Server,
    alice: Mailbox,
    box: Box,
    smtp_port: int,
    worker: OutboundWorker,
    remote: tuple[ReceiverHandler, int],
    dns_server: LoopbackDNS,
) -> None:
    await enable(jmap_server, alice, isEnabled=True, subject="Away", textBody="Back on Monday.")
    sent = await send(smtp_port, "carol@remote.test", [alice.email], mail())
    assert sent["data"][0] == 250
    assert await worker.drain() == 1
    [got] = remote[0].messages
    assert got.mail_from == "" and got.rcpts == ["carol@remote.test"]  # RFC 3834: null sender
    assert got.message["Auto-Submitted"] == "auto-replied"
    assert got.message["Subject"] == "Away" and got.message["In-Reply-To"].startswith("<q-")
    assert "dkim=pass" in dkim_verify(dns_server, got.data)


async def test_destroy_on_success_query_filters_and_query_changes(
    jmap_server: Server, alice: Mailbox, box: Box, worker: OutboundWorker
) -> None:
    client = jmap_server.client(alice.email)
    ident = await identity_id(jmap_server, alice)
    held = Envelope(
        mail_from=Address(email=alice.email, parameters={"HOLDFOR": "600"}),
        rcpt_to=[Address(email="bob@remote.test")],
    )
    results = await run(client.request, [
        EmailSet(create={"a": draft(box, alice.email), "b": draft(box, alice.email)}),
        EmailSubmissionSet(
            create={
                "now": EmailSubmission(identity_id=ident, email_id="#a"),
                "later": EmailSubmission(identity_id=ident, email_id="#b", envelope=held),
            },
            on_success_destroy_email=["#now"],
        ),
    ])  # fmt: skip
    first = results[0].response.created
    subs = results[1].response.created
    # onSuccessDestroyEmail: the sent draft is gone, the held one stays.
    assert results[2].response.destroyed == [first["a"].id]
    left = await run(client.request, EmailGet(ids=[first["a"].id, first["b"].id]))
    assert [e.id for e in left.data] == [first["b"].id] and left.not_found == [first["a"].id]

    pending = await run(
        client.request,
        EmailSubmissionQuery(filter=EmailSubmissionQueryFilterCondition(undo_status="pending")),
    )
    assert pending.ids == [subs["later"].id]
    by_email = await run(
        client.request,
        EmailSubmissionQuery(filter=EmailSubmissionQueryFilterCondition(email_ids=[first["a"].id])),
    )
    assert by_email.ids == [subs["now"].id]
    # Sending the queued one moves its state; queryChanges names it.
    assert await worker.drain() == 1
    since = await run(
        client.request,
        EmailSubmissionQueryChanges(since_query_state=pending.query_state),
    )
    assert subs["now"].id in since.removed
    assert {a.id for a in since.added} == {subs["now"].id}
