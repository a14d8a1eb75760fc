"""Local delivery: one accepted message into the mailboxes of its recipients.

Order matters for "nothing accepted is ever lost": the raw message (with our
trace fields) and every row for every recipient are written in ONE
transaction (shared with other messages arriving at the same moment:
mta/commit.py); the SMTP 250 is sent only after that commit. A message over
256 KiB goes to the blob store and is fsynced first, so a crash before the
commit leaves at most an unreferenced blob (harmless: the client got no 250
and sends again).

Filters run here, per recipient. A filter that fails at run time (or names a
folder that does not exist without ``:create``) is ignored for this message:
it goes to the inbox and the failure is recorded in the activity.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from email.message import Message
from functools import cache

from common.blobs import blob_id_of
from common.db import Conn
from common.ids import short_id
from mail.directory import Recipient
from mta import authentication, received, redirect, vacation
from mta.authentication import results
from mta.context import MtaContext, script_version
from mta.message import ParsedMessage, parse_message, read_message
from mta.sieve.compiler import SieveError
from mta.sieve.interpreter import Envelope, Incoming, Outcome, SieveRuntimeError, run
from mta.store import activity, counters, emails, events, mailboxes
from mta.store import filters as filter_store
from mta.store.filters import Filter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Inbound:
    """An SMTP transaction the daemon accepted and now delivers."""

    raw: bytes
    mail_from: str
    # (recipient as given in RCPT TO, the hosted mailbox it resolved to)
    recipients: list[tuple[str, Recipient]]
    ip: str
    helo: str
    esmtp: bool = True
    tls: bool = False
    smtputf8: bool = False


@dataclass
class Report:
    queue_id: str
    refused: str | None = None  # a reason when the whole message was refused (DMARC)
    email_ids: dict[str, str | None] = field(default_factory=dict)  # address_id -> email id


@dataclass
class _Plan:
    mailbox: Recipient
    outcome: Outcome | None
    failure: str | None
    junk: bool


async def deliver(ctx: MtaContext, inbound: Inbound) -> Report:
    now = ctx.runtime.clock.now()
    queue_id = short_id()
    hostname = ctx.config.smtp_hostname
    raw = results.strip_forged(inbound.raw, hostname)
    trace = received.header(
        helo=inbound.helo,
        ip=inbound.ip,
        hostname=hostname,
        with_=received.protocol(esmtp=inbound.esmtp, tls=inbound.tls, smtputf8=inbound.smtputf8),
        queue_id=queue_id,
        recipients=[rcpt for rcpt, _ in inbound.recipients],
        now=now,
    )
    # Parsed once, before our trace fields: they change none of the fields kept.
    parsed = parse_message(raw)
    junk = False
    dmarc_note = ""
    if ctx.config.auth_checks:
        verdict = await authentication.evaluate(
            ctx.resolver,
            raw,
            inbound.ip,
            inbound.mail_from,
            inbound.helo,
            author=authentication.author_domain(parsed.from_addrs),
        )
        trace += results.header(
            hostname, verdict.spf, verdict.dkim, verdict.dmarc, inbound.mail_from, inbound.helo
        )
        if verdict.dmarc.rejects and ctx.config.dmarc_reject_action == "refuse":
            await _record_refusal(ctx, inbound, "refused by DMARC policy", parsed.subject)
            return Report(queue_id, refused="dmarc")
        if verdict.dmarc.rejects or verdict.dmarc.quarantines:
            junk = True
            dmarc_note = f"junk: DMARC {verdict.dmarc.result} (p={verdict.dmarc.policy})"
    stored = trace + raw
    # Filters see the message as stored, our Received and Authentication-Results
    # fields included: parsed once, only if a filter runs, and read by all of them.
    sieve_message = cache(lambda: read_message(stored))
    plans = [
        await _plan(ctx, inbound, sieve_message, len(stored), mb, junk) for mb in _distinct(inbound)
    ]
    # Small messages are written in the delivery transaction itself (mta/store/raw.py);
    # a large one goes to the blob store, fsynced, before any row refers to it.
    inline = ctx.blobs.inline(len(stored))
    blob_id = blob_id_of(stored) if inline else await ctx.blobs.put(stored)

    async def store_all(conn: Conn) -> Report:
        report = Report(queue_id)
        if inline:
            await ctx.blobs.put_inline(conn, stored, now)
        for plan in plans:
            report.email_ids[plan.mailbox.address_id] = await _store_one(
                ctx, conn, inbound, parsed, plan, blob_id, stored, dmarc_note
            )
        return report

    # Shares its transaction (and its fsync) with deliveries arriving at the same time.
    result: Report = await ctx.committer.run(store_all)
    await _vacation(ctx, inbound, parsed, result, now)
    return result


async def _vacation(
    ctx: MtaContext, inbound: Inbound, parsed: ParsedMessage, report: Report, now: datetime
) -> None:
    """Vacation replies (mta/vacation.py), after the commit: never a reason to refuse mail."""
    boxes = {mb.address_id: mb for _, mb in inbound.recipients}
    if not any(boxes[a].has_vacation for a in report.email_ids if a in boxes):
        return  # the RCPT lookup found no enabled response: nothing to read
    delivered = {
        a: (e, boxes[a].email, boxes[a].account_id)
        for a, e in report.email_ids.items()
        if a in boxes
    }
    try:
        async with ctx.runtime.db.connection() as conn:
            if not await vacation.answering(conn, delivered, now):
                return
        # One transaction: the once-per-period mark and the queued reply commit together.
        async with ctx.runtime.db.transaction() as conn:
            await vacation.respond(
                conn,
                mail_from=inbound.mail_from,
                parsed=parsed,
                delivered=delivered,
                now=now,
                max_lifetime=ctx.config.outbound_max_lifetime,
            )
    except Exception:
        log.exception("vacation reply failed (the message itself was delivered)")


def _rcpt_of(inbound: Inbound, mailbox: Recipient) -> str:
    """The address the sender used for this mailbox (``envelope "to"`` sees user+tag@...)."""
    for rcpt, candidate in inbound.recipients:
        if candidate.address_id == mailbox.address_id:
            return rcpt
    return mailbox.email


def _distinct(inbound: Inbound) -> list[Recipient]:
    # Two RCPTs resolving to one mailbox (alias, +tag, fallback) get one copy.
    seen: dict[str, Recipient] = {}
    for _rcpt, mailbox in inbound.recipients:
        seen.setdefault(mailbox.address_id, mailbox)
    return list(seen.values())


async def _plan(
    ctx: MtaContext,
    inbound: Inbound,
    sieve_message: Callable[[], Message],
    size: int,
    mailbox: Recipient,
    junk: bool,
) -> _Plan:
    if not mailbox.has_filters:
        return _Plan(mailbox, None, None, junk)
    # The RCPT lookup named the enabled filters and their versions: compiled
    # before in this process, they run without another read.
    scripts = ctx.scripts.known(mailbox.filters) if mailbox.filters else None
    rows: list[Filter] = []
    if scripts is None:
        async with ctx.runtime.db.connection() as conn:
            rows = await filter_store.enabled_for(conn, mailbox.address_id)
        if not rows:
            return _Plan(mailbox, None, None, junk)
    try:
        if scripts is None:
            scripts = [
                (r.id, ctx.scripts.get(r.id, script_version(r.updated_at), r.script)) for r in rows
            ]
        outcome = run(
            scripts,
            Incoming(
                sieve_message(),
                size,
                Envelope(inbound.mail_from, _rcpt_of(inbound, mailbox)),
            ),
        )
    except (SieveError, SieveRuntimeError) as exc:
        return _Plan(mailbox, None, str(exc), junk)
    except Exception as exc:  # a bug in a test we run must not lose mail either
        log.exception("filter run failed for %s", mailbox.address_id)
        return _Plan(mailbox, None, f"internal error: {type(exc).__name__}", junk)
    return _Plan(mailbox, outcome, None, junk)


async def _store_one(
    ctx: MtaContext,
    conn: Conn,
    inbound: Inbound,
    parsed: ParsedMessage,
    plan: _Plan,
    blob_id: str,
    stored: bytes,
    dmarc_note: str,
) -> str | None:
    now = ctx.runtime.clock.now()
    size = len(stored)
    address_id = plan.mailbox.address_id
    box = plan.mailbox.junk_id if plan.junk else plan.mailbox.inbox_id
    if box is None:  # first delivery to this address: make its folders
        roles = await mailboxes.ensure_defaults(conn, address_id, now)
        box = roles["junk"] if plan.junk else roles["inbox"]
    default_box = box
    event = activity.Event(
        address_id=address_id,
        kind="received",
        outcome=dmarc_note or ("junk" if plan.junk else "inbox"),
        peer=inbound.ip,
        sender=inbound.mail_from,
        subject=parsed.subject,
    )
    targets: list[str] = []
    keywords: set[str] = set()
    failure = plan.failure
    redirect_to: list[str] = []
    done: list[str] = []
    if plan.outcome is not None and failure is None:
        try:
            for action in plan.outcome.final:
                keywords.update(action.keywords)
                if action.kind == "keep":
                    targets.append(default_box)
                    done.append("junk" if plan.junk else "inbox")
                elif action.kind == "fileinto":
                    assert action.mailbox is not None
                    targets.append(
                        await _folder(conn, address_id, action.mailbox, action.create, now)
                    )
                    done.append(f"fileinto {action.mailbox}")
                elif action.kind == "redirect":
                    assert action.address is not None
                    loop = redirect.loop_reason(stored, plan.mailbox.email, action.address)
                    if loop is not None:  # RFC 5228 4.2: a loop is an error, the message kept
                        raise SieveRuntimeError(loop)
                    if action.address.lower() not in (t.lower() for t in redirect_to):
                        redirect_to.append(action.address)
                    done.append(f"redirect to {action.address}")
        except SieveRuntimeError as exc:
            failure = str(exc)
    else:
        targets.append(default_box)
    if redirect_to and failure is None:
        # One message to every target, queued in this transaction (mta/redirect.py).
        failure = await redirect.queue(
            ctx,
            conn,
            mailbox=plan.mailbox,
            targets=redirect_to,
            envelope_from=inbound.mail_from,
            stored=stored,
            now=now,
        )
    if failure is not None:
        targets, keywords = [default_box], set()
        event = replace(event, kind="failed", outcome="inbox", detail=f"filter failed: {failure}")
    elif plan.outcome is not None and plan.outcome.matched:
        event = replace(event, kind="filtered", outcome=", ".join(done) or "discarded")
    email_id = None
    if targets:
        email_id = await emails.insert(
            conn,
            emails.NewEmail(
                address_id=address_id,
                blob_id=blob_id,
                size=size,
                received_at=now,
                parsed=parsed,
                mailbox_ids=targets,
                keywords=sorted(keywords),
                envelope_from=inbound.mail_from,
            ),
            now,
        )
    await activity.record(
        conn,
        replace(event, email_id=email_id),
        now,
    )
    if email_id is not None:
        # The account's webhooks hear of it (mta/store/events.py): appended with
        # the batch's other rows when the group commit flushes, in this transaction.
        received = events.pending(
            plan.mailbox.account_id,
            "email.received",
            received_data(email_id, parsed, now),
            now,
            email_id=email_id,
        )
        batch = counters.deferred_for(conn)
        if batch is not None:
            batch.events.append(received)
        else:
            await events.append_many(conn, [received])
    return email_id


def _mailbox_text(addr: dict[str, str]) -> str:
    return f"{addr['name']} <{addr['email']}>" if addr.get("name") else addr["email"]


def received_data(email_id: str, parsed: ParsedMessage, now: datetime) -> dict[str, object]:
    """Resend's email.received ``data``: metadata only, never the body."""
    return {
        "email_id": email_id,
        "created_at": events.iso(now),
        "from": ", ".join(_mailbox_text(a) for a in parsed.from_addrs),
        "to": [a["email"] for a in parsed.to_addrs],
        "cc": [a["email"] for a in parsed.cc_addrs],
        "bcc": [],
        "message_id": parsed.message_id or "",
        "subject": parsed.subject,
        "has_attachments": parsed.has_attachment,
    }


async def _folder(conn: Conn, address_id: str, path: str, create: bool, now: datetime) -> str:
    try:
        if create:
            return await mailboxes.create_path(conn, address_id, path, now)
        found = await mailboxes.find_path(conn, address_id, path)
    except ValueError as exc:
        raise SieveRuntimeError(str(exc)) from exc
    if found is None:
        raise SieveRuntimeError(f"folder {path!r} does not exist (fileinto :create makes it)")
    return found


async def _record_refusal(ctx: MtaContext, inbound: Inbound, outcome: str, subject: str) -> None:
    now = ctx.runtime.clock.now()
    async with ctx.runtime.db.transaction() as conn:
        for mailbox in _distinct(inbound):
            await activity.record(
                conn,
                activity.Event(
                    address_id=mailbox.address_id,
                    kind="refused",
                    outcome=outcome,
                    peer=inbound.ip,
                    sender=inbound.mail_from,
                    subject=subject,
                ),
                now,
            )


async def record_refused_rcpt(
    ctx: MtaContext, mailbox: Recipient, *, ip: str, sender: str, outcome: str
) -> None:
    """A refusal at RCPT of a known address (over quota): shown in its activity."""
    async with ctx.runtime.db.connection() as conn:
        await activity.record(
            conn,
            activity.Event(
                address_id=mailbox.address_id,
                kind="refused",
                outcome=outcome,
                peer=ip,
                sender=sender,
            ),
            ctx.runtime.clock.now(),
        )
