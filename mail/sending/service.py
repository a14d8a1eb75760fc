"""Sending through the API: check, build the MIME, record, enqueue; all in one transaction.

The email's row (``mail.sent_emails``), its queued message (mta's outbound
queue, through ``mailstore.submit``) and its Idempotency-Key answer commit
together or not at all, so a retried request finds either everything or
nothing. The queue sends, signs with the domain's DKIM key, retries and
writes the email.* events; reads join the two sides by the shared id.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from common.db import Conn
from mail.auth.sessions import Auth
from mail.billing import entitlement
from mail.context import MailContext
from mail.dkim import store as keys_store
from mail.dns import status as dns_status
from mail.domains import service as domains
from mail.domains import store as domains_store
from mail.errors import MailError, field_error, not_found
from mail.sending import fields, mime, schedule, store
from mail.sending.fields import Draft
from mail.sending.store import SentEmail
from mta.mailstore import (
    Event,
    OutboundStatus,
    Sends,
    Submission,
    cancel_scheduled,
    email_events,
    outbound_status,
    outbound_statuses,
    reschedule,
    submit,
)

IDEMPOTENCY_WINDOW = timedelta(hours=24)
MAX_IDEMPOTENCY_KEY = 256
MAX_BATCH = 100


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def invalid_idempotency_key() -> MailError:
    return MailError("invalid_idempotency_key", "The key must be between 1-256 chars.")


def check_idempotency_key(raw: str | None) -> str | None:
    if raw is None:
        return None
    if not 1 <= len(raw) <= MAX_IDEMPOTENCY_KEY:
        raise invalid_idempotency_key()
    return raw


def fingerprint(route: str, body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{route}:{hashlib.sha256(canonical.encode()).hexdigest()}"


@dataclass(frozen=True)
class Request:
    """What one POST asked for: its emails (checked or refused) and how to answer."""

    auth: Auth
    route: str  # "emails" or "emails/batch"
    body: Any
    idempotency_key: str | None
    # Batch's x-batch-validation: permissive sends the valid emails and lists the others.
    permissive: bool = False


def parse_drafts(
    items: list[Any], now: datetime, *, batch: bool, permissive: bool
) -> list[Draft | MailError]:
    out: list[Draft | MailError] = []
    for index, item in enumerate(items):
        try:
            out.append(fields.draft(item, now))
        except MailError as exc:
            if not batch:
                raise
            if not permissive:
                raise MailError(
                    exc.name, f"emails[{index}]: {exc.message}", status=exc.status
                ) from None
            out.append(exc)
    return out


async def send(ctx: MailContext, req: Request, items: list[Any]) -> dict[str, Any]:
    """The answer of POST /api/emails (``{id}``) or /api/emails/batch (``{data}``)."""
    now = ctx.clock.now()
    batch = req.route == "emails/batch"
    request_print = fingerprint(req.route, req.body) if req.idempotency_key else ""
    account_id = req.auth.account.id
    async with ctx.db.transaction() as conn:
        if req.idempotency_key is not None:
            if not await store.lock_key(conn, account_id, req.idempotency_key):
                raise MailError(
                    "concurrent_idempotent_requests",
                    "Same idempotency key used while original request is still in progress.",
                )
            earlier = await store.remembered(
                conn, account_id, req.idempotency_key, now - IDEMPOTENCY_WINDOW
            )
            if earlier is not None:
                if earlier.fingerprint != request_print:
                    raise MailError(
                        "invalid_idempotent_request",
                        "Same idempotency key used with a different request payload.",
                    )
                # The first answer again, even if the body would no longer pass
                # (a scheduled_at now in the past): nothing is checked or sent twice.
                return dict(earlier.response)
        await entitlement.require_feature(conn, account_id, "api_sending")
        drafts = parse_drafts(items, now, batch=batch, permissive=req.permissive)
        checked = await _check_senders(
            conn, ctx, req.auth, drafts, batch=batch, permissive=req.permissive
        )
        # The plan's sends_per_month: every email this request records counts.
        sends = sum(1 for item in checked if not isinstance(item, MailError))
        if sends:
            await entitlement.reserve(conn, account_id, "sends_per_month", sends, now=now)
        ids: list[str] = []
        errors: list[dict[str, Any]] = []
        for index, item in enumerate(checked):
            if isinstance(item, MailError):
                errors.append({"index": index, "message": item.message})
                continue
            ids.append(
                await _record(
                    conn, req.auth, item, now, max_lifetime=ctx.config.outbound_max_lifetime
                )
            )
        if batch:
            answer: dict[str, Any] = {"data": [{"id": i} for i in ids]}
            if req.permissive:
                answer["errors"] = errors
        else:
            answer = {"id": ids[0]}
        if req.idempotency_key is not None:
            await store.remember(conn, account_id, req.idempotency_key, request_print, answer, now)
    return answer


def not_verified(domain: str) -> MailError:
    return field_error(
        f"The {domain} domain is not verified. Please, add and verify your domain.", status=403
    )


async def _check_senders(
    conn: Conn,
    ctx: MailContext,
    auth: Auth,
    drafts: list[Draft | MailError],
    *,
    batch: bool,
    permissive: bool,
) -> list[Draft | MailError]:
    """Each draft whose from domain may send, else its error (strict: the first is raised)."""
    verdicts: dict[str, MailError | None] = {}
    out: list[Draft | MailError] = []
    for index, item in enumerate(drafts):
        if isinstance(item, Draft):
            domain = item.sender.domain
            if domain not in verdicts:
                verdicts[domain] = await sender_problem(conn, ctx, auth, domain)
            problem = verdicts[domain]
            if problem is not None:
                if not permissive:
                    if batch:
                        raise MailError(
                            problem.name,
                            f"emails[{index}]: {problem.message}",
                            status=problem.status,
                        )
                    raise problem
                item = problem
        out.append(item)
    return out


async def sender_problem(conn: Conn, ctx: MailContext, auth: Auth, name: str) -> MailError | None:
    """Why the account may not send from ``name`` now, or None.

    The domain must be one of the account's, and the last DNS check must have
    found its SPF record and the TXT record of its active DKIM key (the two
    records a receiver checks our mail against; docs/mail.md). Another
    account's domain reads exactly like an unverified one.
    """
    domain = await domains_store.get_by_name(conn, name)
    if domain is None or domain.account_id != auth.account.id:
        return not_verified(name)
    key = auth.api_key
    if key is not None and key.domain_id is not None and key.domain_id != domain.id:
        return field_error(
            f"This API key can only send from the {key.domain_name} domain.", status=403
        )
    key_rows = await keys_store.list_for_domain(conn, domain.id)
    active = [k.selector for k in key_rows if k.active]
    records = domains.statuses(domain, domains.expected_records(ctx, domain, key_rows))
    spf = any(r.record.purpose == "spf" and r.status == dns_status.VERIFIED for r in records)
    dkim = any(
        r.record.purpose == "dkim"
        and r.status == dns_status.VERIFIED
        and r.record.name.split(".", 1)[0] in active
        for r in records
    )
    return None if spf and dkim else not_verified(name)


async def _record(conn: Conn, auth: Auth, draft: Draft, now: datetime, *, max_lifetime: int) -> str:
    email_id = str(uuid.uuid4())
    # Date is when it leaves: a scheduled email carries its schedule, not its creation.
    raw = mime.build(email_id, draft, draft.scheduled_at or now)
    email = SentEmail(
        id=email_id,
        account_id=auth.account.id,
        api_key_id=auth.api_key.id if auth.api_key else None,
        from_address=str(draft.sender),
        to_addresses=[str(b) for b in draft.to],
        cc=[str(b) for b in draft.cc],
        bcc=[str(b) for b in draft.bcc],
        reply_to=[str(b) for b in draft.reply_to],
        subject=draft.subject,
        html=draft.html,
        text=draft.text,
        tags=draft.tags,
        headers=draft.headers,
        attachments=[
            {"filename": a.filename, "content_type": a.content_type, "size": len(a.content)}
            for a in draft.attachments
        ],
        message_id=mime.message_id(email_id, draft),
        scheduled_at=draft.scheduled_at,
        created_at=now,
    )
    await store.insert(conn, email)
    data: dict[str, Any] = {
        "email_id": email_id,
        "created_at": _iso(now),
        "from": email.from_address,
        "to": [b.address for b in draft.to],
        "subject": draft.subject,
    }
    if draft.tags:
        data["tags"] = {t["name"]: t["value"] for t in draft.tags}
    if draft.headers:
        data["headers"] = [{"name": k, "value": v} for k, v in draft.headers.items()]
    # The request's sends were reserved together before its emails were recorded.
    await submit(
        conn,
        Submission(
            message_id=email_id,
            source="api",
            mail_from=draft.sender.address,
            recipients=draft.recipients,
            raw=raw,
            account_id=auth.account.id,
            sends=Sends.RESERVED,
            send_at=draft.scheduled_at,
            event_data=data,
        ),
        now=now,
        max_lifetime=max_lifetime,
    )
    return email_id


# --- reads ------------------------------------------------------------------


@dataclass(frozen=True)
class EmailDetail:
    email: SentEmail
    status: OutboundStatus | None
    events: list[Event]


async def get(ctx: MailContext, auth: Auth, email_id: str) -> EmailDetail:
    async with ctx.db.connection() as conn:
        email = await store.get(conn, auth.account.id, email_id)
        if email is None:
            raise not_found("email")
        status = await outbound_status(conn, auth.account.id, email_id)
        events = await email_events(conn, auth.account.id, email_id)
    return EmailDetail(email, status, events)


async def list_emails(
    ctx: MailContext, auth: Auth, *, limit: int, after: str | None, before: str | None
) -> tuple[list[SentEmail], dict[str, str], bool]:
    """A page, each email's status (one query for the page), and whether more follow."""
    async with ctx.db.connection() as conn:
        cursor = after or before
        if cursor is not None and not await store.exists(conn, auth.account.id, cursor):
            raise field_error(f"The cursor {cursor!r} is not one of your emails.")
        emails, has_more = await store.page(
            conn, auth.account.id, limit=limit, after=after, before=before
        )
        states = await outbound_statuses(conn, auth.account.id, [e.id for e in emails])
    return emails, states, has_more


async def _owned(conn: Conn, auth: Auth, email_id: str) -> None:
    if not await store.exists(conn, auth.account.id, email_id):
        raise not_found("email")


def not_scheduled(what: str) -> MailError:
    # The spec's state table: only a scheduled email moves or is canceled.
    return field_error(f"Only a scheduled email can be {what}; this one is not scheduled.")


async def cancel(ctx: MailContext, auth: Auth, email_id: str) -> None:
    async with ctx.db.transaction() as conn:
        await _owned(conn, auth, email_id)
        if not await cancel_scheduled(conn, auth.account.id, email_id, ctx.clock.now()):
            raise not_scheduled("canceled")


async def move(ctx: MailContext, auth: Auth, email_id: str, raw_when: object) -> None:
    now = ctx.clock.now()
    when = schedule.parse(raw_when, now)
    async with ctx.db.transaction() as conn:
        await _owned(conn, auth, email_id)
        if not await reschedule(conn, auth.account.id, email_id, when, now):
            raise not_scheduled("rescheduled")
        await store.set_schedule(conn, email_id, when)
