"""SQL of the outbound queue: ``mta.outbound_messages`` and ``mta.outbound_recipients``.

A message is enqueued in its author's transaction (submission, the sending
API, the panel's own mail) and is durable when that commits; the NOTIFY on
:data:`CHANNEL` wakes the worker at the same moment. The worker
(mta/outbound/worker.py) claims due recipients with SKIP LOCKED by moving
their ``next_attempt_at`` forward by a lease, delivers outside any
transaction, then records each outcome, the message's status and its events
in one transaction, shared with the other messages finishing then (the group
commit, mta/commit.py): :func:`record_outcomes` and :func:`settle_later` keep
them in the batch, and :func:`write_deferred` writes all its outcomes with one
statement and reads and writes its messages' statuses with one each, before
the batch's COMMIT. A worker killed mid-delivery
leaves its rows due again when the lease ends: nothing accepted is lost
(a recipient may, rarely, receive a message twice; never none).

Message status is Resend's ``last_event``; :func:`settle` derives it from the
recipients after every change and writes the event of each transition.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.message import Message
from email.parser import BytesHeaderParser
from email.policy import compat32
from email.policy import default as default_policy
from email.utils import getaddresses
from typing import Any

from common.crypto import Sealer
from common.db import Conn, Prepared, execute, fetch_all, fetch_one
from common.logs import current_request_id
from common.records import Record
from mta.store import events
from mta.store.batch import Deferred, deferred_for

# LISTENed on by the worker; the payload is the message id.
CHANNEL = "mta_outbound"
# How long a message may wait for a recipient's server (Postfix's
# maximal_queue_lifetime is 5 days too); OUTBOUND_MAX_LIFETIME shortens it.
DEFAULT_LIFETIME = timedelta(days=5)
SEAL_PURPOSE = "mta.outbound"
SOURCES = ("submission", "api", "system", "webmail", "jmap", "redirect")
PENDING = ("queued", "deferred")
# The panel's own mail and DSNs write no email.* events: the account's webhooks
# report the mail it sends, not its password resets or our bounce reports.
SILENT_SOURCES = ("system",)
FINAL = ("delivered", "bounced", "failed", "suppressed", "canceled")
# A message whose every recipient is final (its raw is erased).
MESSAGE_FINAL = ("delivered", "bounced", "failed", "suppressed", "canceled", "complained")
# SES's name (Resend sends through SES) for "not attempted: on the account's list".
SUPPRESSED_TYPE = "OnAccountSuppressionList"
SUPPRESSED_MESSAGE = "on the account's suppression list: not attempted"


def outbound_sealer(secret: str) -> Sealer:
    """The sealer of raw messages that carry secrets (the panel's own mail)."""
    return Sealer(secret, SEAL_PURPOSE)


@dataclass(frozen=True)
class RecipientStatus(Record):
    email: str
    status: str
    attempts: int
    last_reply: str
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None
    destination: str


@dataclass(frozen=True)
class OutboundStatus:
    id: str
    status: str
    source: str
    mail_from: str
    created_at: datetime
    scheduled_at: datetime | None
    updated_at: datetime
    recipients: list[RecipientStatus] = field(default_factory=list)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


# Header values the email package's default policy would give back unchanged:
# printable ASCII on one line, with no encoded word, quoted string, comment or
# run of spaces for it to decode or rewrite (a bare address, "Name <address>").
_PLAIN = re.compile(r"[!#-'*-~]+(?: [!#-'*-~]+)*")


def default_event_data(
    message_id: str, raw: bytes, now: datetime, headers: Message | None = None
) -> dict[str, Any]:
    """Resend's ``data`` for mail the API did not describe (submission, system).

    ``headers``: the header block already parsed with ``compat32`` (submission's
    sender check has it). Plain values are taken as they are; any other makes
    the block parsed again with the default policy, which decodes and unfolds.
    """
    if headers is None:
        headers = BytesHeaderParser(policy=compat32).parsebytes(raw, headersonly=True)
    values = {name: [str(v) for v in headers.get_all(name) or []] for name in _EVENT_FIELDS}
    if all(_PLAIN.fullmatch(v.strip(" ")) and "=?" not in v for vs in values.values() for v in vs):
        # What the default policy gives for these: From without its outer
        # spaces, the Subject as it stands.
        sender = values["From"][0].strip(" ") if values["From"] else ""
        subject = values["Subject"][0] if values["Subject"] else ""
        to = values["To"]
    else:
        parsed = BytesHeaderParser(policy=default_policy).parsebytes(raw, headersonly=True)
        sender = str(parsed.get("From", ""))
        subject = str(parsed.get("Subject", ""))
        to = [str(v) for v in parsed.get_all("To") or []]
    return {
        "email_id": message_id,
        "created_at": _iso(now),
        "from": sender,
        "to": [a for _, a in getaddresses(to) if a],
        "subject": subject,
    }


_EVENT_FIELDS = ("From", "To", "Subject")


# The message, its recipients (each tested against the account's suppressions)
# and the worker's wake-up in one prepared statement: one round trip for every
# message queued. It answers the recipients found suppressed.
_ENQUEUE = Prepared(
    f"""
    WITH m AS (
        INSERT INTO mta.outbound_messages
            (id, account_id, address_id, source, mail_from, raw, raw_sealed, size,
             created_at, scheduled_at, expires_at, status, event_data, updated_at, trace_id)
        VALUES (%(id)s, %(acc)s, %(addr)s, %(src)s, %(from)s, %(raw)s, %(sealed)s, %(size)s,
                %(now)s, %(sched)s, %(exp)s, %(status)s, %(data)s::jsonb, %(now)s, %(trace)s)
        RETURNING id
    ), b AS (
        SELECT x.rcpt, x.low, x.n, x.verp,
               EXISTS (SELECT 1 FROM mta.suppressions s
                        WHERE s.account_id = %(acc)s AND s.email = x.low) AS blocked
          FROM unnest(%(rcpts)s::text[], %(lows)s::text[], %(verps)s::text[])
               WITH ORDINALITY AS x(rcpt, low, verp, n)
    ), r AS (
        INSERT INTO mta.outbound_recipients
            (message_id, position, rcpt, status, next_attempt_at, last_reply, verp)
        SELECT (SELECT id FROM m), b.n, b.rcpt,
               CASE WHEN b.blocked THEN 'suppressed' ELSE 'queued' END,
               CASE WHEN b.blocked THEN NULL ELSE %(due)s::timestamptz END,
               CASE WHEN b.blocked THEN %(suppressed)s ELSE '' END,
               b.verp
          FROM b
    )
    SELECT pg_notify('{CHANNEL}', %(id)s::text),
           ARRAY(SELECT b.low FROM b WHERE b.blocked ORDER BY b.n) AS blocked
    """
)


async def enqueue(
    conn: Conn,
    *,
    message_id: str,
    account_id: str | None,
    source: str,
    mail_from: str,
    recipients: list[str],
    raw: bytes,
    now: datetime,
    scheduled_at: datetime | None = None,
    event_data: dict[str, Any] | None = None,
    address_id: str | None = None,
    sealer: Sealer | None = None,
    lifetime: timedelta = DEFAULT_LIFETIME,
) -> None:
    if source not in SOURCES:
        raise ValueError(f"unknown source {source!r}")
    if not recipients:
        raise ValueError("a message needs at least one recipient")
    scheduled = scheduled_at is not None and scheduled_at > now
    due = scheduled_at if scheduled and scheduled_at is not None else now
    data = event_data if event_data is not None else default_event_data(message_id, raw, now)
    # One row per distinct recipient (compared case-insensitively), in order.
    first: dict[str, str] = {}
    for rcpt in recipients:
        first.setdefault(rcpt.lower(), rcpt)
    unique = list(first.values())
    row = await _ENQUEUE.fetch_one(
        conn,
        {
            "id": message_id,
            "acc": account_id,
            "addr": address_id,
            "src": source,
            "from": mail_from,
            "raw": None if sealer else raw,
            "sealed": sealer.seal(raw) if sealer else None,
            "size": len(raw),
            "now": now,
            "sched": scheduled_at,
            "exp": due + lifetime,
            "status": "scheduled" if scheduled else "queued",
            "data": json.dumps(data),
            # The request (or SMTP transaction, or job) that queued it.
            "trace": current_request_id(),
            "due": due,
            "rcpts": unique,
            # As mta/store/suppressions.py keeps them (the instance's own mail,
            # with no account, has no list).
            "lows": [r.strip().lower() if account_id else "" for r in unique],
            "verps": [secrets.token_hex(10) for _ in unique],
            "suppressed": f"suppressed: {SUPPRESSED_MESSAGE}",
        },
    )
    blocked = set(row["blocked"]) if row is not None else set()
    if scheduled and account_id and source not in SILENT_SOURCES:
        await events.record(conn, account_id, "email.scheduled", data, now, email_id=message_id)
    if blocked:
        for rcpt in unique:
            if rcpt.strip().lower() in blocked:
                await record_suppressed_event(conn, message_id, rcpt, now)
        await settle(conn, message_id, now)


_STATUS_COLUMNS = """id::text, status, source, mail_from, created_at, scheduled_at, updated_at"""
_RCPT_COLUMNS = """message_id::text, rcpt AS email, status, attempts, last_reply,
                   last_attempt_at, next_attempt_at, destination"""


async def status(conn: Conn, account_id: str, message_id: str) -> OutboundStatus | None:
    row = await fetch_one(
        conn,
        f"SELECT {_STATUS_COLUMNS} FROM mta.outbound_messages WHERE id = %s AND account_id = %s",
        (message_id, account_id),
    )
    if row is None:
        return None
    rows = await fetch_all(
        conn,
        f"SELECT {_RCPT_COLUMNS} FROM mta.outbound_recipients"
        " WHERE message_id = %s ORDER BY position",
        (message_id,),
    )
    return OutboundStatus(**row, recipients=[RecipientStatus.from_row(r) for r in rows])


async def statuses(conn: Conn, account_id: str, message_ids: list[str]) -> dict[str, str]:
    if not message_ids:
        return {}
    rows = await fetch_all(
        conn,
        "SELECT id::text, status FROM mta.outbound_messages"
        " WHERE account_id = %s AND id = ANY(%s::uuid[])",
        (account_id, message_ids),
    )
    return {r["id"]: r["status"] for r in rows}


async def event_target(conn: Conn, message_id: str) -> dict[str, Any] | None:
    return await fetch_one(
        conn,
        "SELECT CASE WHEN source = ANY(%s) THEN NULL ELSE account_id::text END AS account_id,"
        " event_data FROM mta.outbound_messages WHERE id = %s",
        (list(SILENT_SOURCES), message_id),
    )


async def cancel_scheduled(conn: Conn, account_id: str, message_id: str, now: datetime) -> bool:
    row = await fetch_one(
        conn,
        """
        UPDATE mta.outbound_messages
           SET status = 'canceled', raw = NULL, raw_sealed = NULL, updated_at = %s
         WHERE id = %s AND account_id = %s AND status = 'scheduled'
        RETURNING event_data
        """,
        (now, message_id, account_id),
    )
    if row is None:
        return False
    await execute(
        conn,
        """
        UPDATE mta.outbound_recipients SET status = 'canceled', next_attempt_at = NULL
         WHERE message_id = %s AND status IN ('queued', 'deferred')
        """,
        (message_id,),
    )
    await events.record(
        conn, account_id, "email.canceled", row["event_data"] or {}, now, email_id=message_id
    )
    return True


async def reschedule(
    conn: Conn,
    account_id: str,
    message_id: str,
    when: datetime,
    now: datetime,
    lifetime: timedelta = DEFAULT_LIFETIME,
) -> bool:
    row = await fetch_one(
        conn,
        """
        UPDATE mta.outbound_messages
           SET scheduled_at = %(when)s, expires_at = %(exp)s, updated_at = %(now)s
         WHERE id = %(id)s AND account_id = %(acc)s AND status = 'scheduled'
        RETURNING id
        """,
        {
            "when": when,
            "exp": max(when, now) + lifetime,
            "now": now,
            "id": message_id,
            "acc": account_id,
        },
    )
    if row is None:
        return False
    await execute(
        conn,
        """
        UPDATE mta.outbound_recipients SET next_attempt_at = %s
         WHERE message_id = %s AND status = 'queued'
        """,
        (max(when, now), message_id),
    )
    return True


# The worker's side.


@dataclass(frozen=True)
class Claimed(Record):
    """A recipient a worker holds for one attempt, with its message's envelope."""

    message_id: str
    position: int
    rcpt: str
    attempts: int
    verp: str
    account_id: str | None
    address_id: str | None
    source: str
    mail_from: str
    created_at: datetime
    scheduled_at: datetime | None
    expires_at: datetime
    trace_id: str | None
    # What the activity log shows for the message (read with the claim, not per message).
    subject: str = ""
    # The message itself when small and not sealed (CLAIM_RAW_BYTES): read with
    # the claim, not once more per message; None: read it with raw_of().
    raw: bytes | None = None
    # On the account's suppression list now (checked with the claim for
    # addresses in ASCII, whose case PostgreSQL folds as Python does).
    suppressed: bool = False


# Messages up to this size come with their claim (a claim of BATCH recipients
# then holds at most a few MB); larger ones are read one by one.
CLAIM_RAW_BYTES = 64 * 1024


async def claim(conn: Conn, now: datetime, lease: timedelta, limit: int) -> list[Claimed]:
    """Due recipients, held for ``lease`` (several workers: SKIP LOCKED)."""
    rows = await fetch_all(
        conn,
        """
        WITH due AS (
            SELECT message_id, position FROM mta.outbound_recipients
             WHERE next_attempt_at <= %(now)s
             ORDER BY next_attempt_at
             LIMIT %(limit)s
               FOR UPDATE SKIP LOCKED
        )
        UPDATE mta.outbound_recipients r
           SET next_attempt_at = %(until)s
          FROM due, mta.outbound_messages m
         WHERE r.message_id = due.message_id AND r.position = due.position
           AND m.id = r.message_id
        RETURNING r.message_id::text, r.position, r.rcpt, r.attempts, r.verp,
                  m.account_id::text, m.address_id::text, m.source, m.mail_from,
                  m.created_at, m.scheduled_at, m.expires_at, m.trace_id,
                  coalesce(m.event_data ->> 'subject', '') AS subject,
                  CASE WHEN m.size <= %(small)s THEN m.raw END AS raw,
                  m.account_id IS NOT NULL AND EXISTS (
                      SELECT 1 FROM mta.suppressions s
                       WHERE s.account_id = m.account_id AND s.email = lower(btrim(r.rcpt))
                  ) AS suppressed
        """,
        {"now": now, "until": now + lease, "limit": limit, "small": CLAIM_RAW_BYTES},
    )
    return [
        Claimed.from_row({**row, "raw": None if row["raw"] is None else bytes(row["raw"])})
        for row in rows
    ]


async def start_sending(conn: Conn, message_ids: list[str], now: datetime) -> None:
    """Messages leaving the queue for the first time: 'sent', with their email.sent."""
    rows = await fetch_all(
        conn,
        """
        UPDATE mta.outbound_messages SET status = 'sent', updated_at = %s
         WHERE id = ANY(%s::uuid[]) AND status IN ('queued', 'scheduled')
        RETURNING id::text, account_id::text, event_data, source, trace_id
        """,
        (now, message_ids),
    )
    sent = [
        events.pending(
            row["account_id"],
            "email.sent",
            row["event_data"] or {},
            now,
            email_id=row["id"],
            # The request that queued it, though several messages start together.
            request_id=row["trace_id"],
        )
        for row in rows
        if row["account_id"] and row["source"] not in SILENT_SOURCES
    ]
    if sent:  # one statement for the claim's messages
        await events.append_many(conn, sent)


_RAW_OF = Prepared("SELECT raw, raw_sealed FROM mta.outbound_messages WHERE id = %(id)s")


async def raw_of(conn: Conn, message_id: str, sealer: Sealer | None) -> bytes | None:
    row = await _RAW_OF.fetch_one(conn, {"id": message_id})
    if row is None:
        return None
    if row["raw_sealed"] is not None:
        if sealer is None:
            raise ValueError("a sealed message needs the outbound sealer")
        return sealer.open_bytes(row["raw_sealed"])
    return None if row["raw"] is None else bytes(row["raw"])


@dataclass(frozen=True)
class Outcome:
    """The result of one attempt at one recipient."""

    message_id: str
    position: int
    # 'delivered' | 'deferred' | 'bounced' | 'failed' | 'suppressed'
    status: str
    reply: str
    destination: str = ""
    # Deferred: when to try again.
    retry_at: datetime | None = None
    # Counted as an attempt (False when not tried: suppressed).
    attempted: bool = True


# The worker's per-message statements are prepared (planned once per connection):
# by primary key, so the generic plan is the only plan.
_RECORD_OUTCOME = Prepared(
    """
        UPDATE mta.outbound_recipients
           SET status = %(status)s,
               attempts = attempts + %(tried)s,
               last_attempt_at = CASE WHEN %(tried)s = 1 THEN %(now)s ELSE last_attempt_at END,
               next_attempt_at = %(retry)s,
               last_reply = %(reply)s,
               destination = CASE WHEN %(dest)s = '' THEN destination ELSE %(dest)s END
         WHERE message_id = %(id)s AND position = %(pos)s
    """
)


async def record_outcome(conn: Conn, outcome: Outcome, now: datetime) -> None:
    await _RECORD_OUTCOME.execute(
        conn,
        {
            "status": outcome.status,
            "tried": 1 if outcome.attempted else 0,
            "now": now,
            "retry": outcome.retry_at if outcome.status == "deferred" else None,
            "reply": outcome.reply[:1000],
            "dest": outcome.destination[:255],
            "id": outcome.message_id,
            "pos": outcome.position,
        },
    )


# The outcomes of a group commit's messages (mta/commit.py, the worker's), in one statement.
_RECORD_OUTCOMES = Prepared(
    """
        UPDATE mta.outbound_recipients r
           SET status = x.status,
               attempts = r.attempts + x.tried,
               last_attempt_at = CASE WHEN x.tried = 1 THEN x.now ELSE r.last_attempt_at END,
               next_attempt_at = x.retry,
               last_reply = x.reply,
               destination = CASE WHEN x.dest = '' THEN r.destination ELSE x.dest END
          FROM unnest(%(id)s::text[]::uuid[], %(pos)s::int[], %(status)s::text[],
                      %(tried)s::int[], %(now)s::text[]::timestamptz[],
                      %(retry)s::text[]::timestamptz[], %(reply)s::text[], %(dest)s::text[])
               AS x(id, pos, status, tried, now, retry, reply, dest)
         WHERE r.message_id = x.id AND r.position = x.pos
           -- The key's prefix by itself too: its index, not a scan, whatever the statistics.
           AND r.message_id = ANY(%(id)s::text[]::uuid[])
    """
)


async def record_outcomes(conn: Conn, outcomes: list[Outcome], now: datetime) -> None:
    """:func:`record_outcome` of each; in a group commit written with the batch's
    others by one statement before its COMMIT (:func:`write_deferred`)."""
    batch = deferred_for(conn)
    if batch is not None:
        batch.outcomes.extend((outcome, now) for outcome in outcomes)
        return
    for outcome in outcomes:
        await record_outcome(conn, outcome, now)


def _outcome_params(rows: list[tuple[Outcome, datetime]]) -> dict[str, list[Any]]:
    return {
        "id": [o.message_id for o, _ in rows],
        "pos": [o.position for o, _ in rows],
        "status": [o.status for o, _ in rows],
        "tried": [1 if o.attempted else 0 for o, _ in rows],
        "now": [now for _, now in rows],
        "retry": [o.retry_at if o.status == "deferred" else None for o, _ in rows],
        "reply": [o.reply[:1000] for o, _ in rows],
        "dest": [o.destination[:255] for o, _ in rows],
    }


async def settle_later(
    conn: Conn, message_id: str, now: datetime, *, extra: dict[str, Any] | None = None
) -> None:
    """:func:`settle`, in a group commit with the batch's other messages when it writes
    its outcomes (:func:`write_deferred`); at once otherwise."""
    batch = deferred_for(conn)
    if batch is None:
        await settle(conn, message_id, now, extra=extra)
        return
    _, before = batch.settles.get(message_id, (now, None))
    if before and extra is not None:
        extra = {**before, **extra}
    batch.settles[message_id] = (now, extra if extra is not None else before)


async def write_deferred(conn: Conn, batch: Deferred) -> None:
    """A group commit's outcomes, then its messages settled: two statements for the
    batch when no status changes, three when some do, whatever its size."""
    if batch.outcomes:
        await _RECORD_OUTCOMES.execute(conn, _outcome_params(batch.outcomes))
        batch.outcomes = []
    if not batch.settles:
        return
    settles, batch.settles = batch.settles, {}
    rows = await _SETTLE_READ_MANY.fetch_all(conn, {"ids": sorted(settles)})
    changed: list[tuple[str, str, bool, datetime]] = []
    for row in rows:
        now, extra = settles[row["id"]]
        new = _derive(row["counts"] or {}, row["status"])
        if new == row["status"]:
            continue
        changed.append((row["id"], new, new in MESSAGE_FINAL, now))
        await _settled_event(conn, row, new, now, extra)
    if changed:
        await _SETTLE_WRITE_MANY.execute(
            conn,
            {
                "ids": [c[0] for c in changed],
                "statuses": [c[1] for c in changed],
                "erase": [c[2] for c in changed],
                "nows": [c[3] for c in changed],
            },
        )


def _derive(counts: dict[str, int], current: str) -> str:
    """A message's Resend status from its recipients' counts."""
    if counts.get("queued", 0) or counts.get("deferred", 0):
        if counts.get("deferred", 0):
            return "delivery_delayed"
        return current if current in ("scheduled", "queued") else "sent"
    if counts.get("bounced", 0):
        return "bounced"
    if counts.get("delivered", 0) and not counts.get("failed", 0):
        return "delivered"
    if counts.get("canceled", 0) and not (counts.get("failed", 0) or counts.get("delivered", 0)):
        return "canceled"
    if counts.get("failed", 0):
        return "failed"
    # Resend's last_event: none was attempted because each is on the suppression list.
    return "suppressed" if counts.get("suppressed", 0) else "delivered"


# Transitions that write an event (bounces and suppressions write theirs per recipient).
_EVENT_OF = {
    "sent": "email.sent",
    "delivery_delayed": "email.delivery_delayed",
    "delivered": "email.delivered",
    "failed": "email.failed",
}


_SETTLE_READ = Prepared(
    """
    SELECT m.status, m.account_id::text, m.event_data, m.source,
           (SELECT jsonb_object_agg(s, n) FROM (
                SELECT status AS s, count(*) AS n FROM mta.outbound_recipients
                 WHERE message_id = m.id GROUP BY status) c) AS counts
      FROM mta.outbound_messages m WHERE m.id = %(id)s FOR UPDATE
    """
)
_SETTLE_WRITE = Prepared(
    """
    UPDATE mta.outbound_messages
       SET status = %(status)s, updated_at = %(now)s,
           raw = CASE WHEN %(erase)s::boolean THEN NULL ELSE raw END,
           raw_sealed = CASE WHEN %(erase)s::boolean THEN NULL ELSE raw_sealed END
     WHERE id = %(id)s
    """
)


# settle for many messages: locked in id order (two workers settling overlapping
# batches never deadlock), written by one statement.
_SETTLE_READ_MANY = Prepared(
    """
    SELECT m.id::text, m.status, m.account_id::text, m.event_data, m.source,
           (SELECT jsonb_object_agg(s, n) FROM (
                SELECT status AS s, count(*) AS n FROM mta.outbound_recipients
                 WHERE message_id = m.id GROUP BY status) c) AS counts
      FROM mta.outbound_messages m WHERE m.id = ANY(%(ids)s::text[]::uuid[])
     ORDER BY m.id FOR UPDATE
    """
)
_SETTLE_WRITE_MANY = Prepared(
    """
    UPDATE mta.outbound_messages m
       SET status = x.status, updated_at = x.now,
           raw = CASE WHEN x.erase THEN NULL ELSE m.raw END,
           raw_sealed = CASE WHEN x.erase THEN NULL ELSE m.raw_sealed END
      FROM unnest(%(ids)s::text[]::uuid[], %(statuses)s::text[], %(erase)s::boolean[],
                  %(nows)s::text[]::timestamptz[]) AS x(id, status, erase, now)
     WHERE m.id = x.id AND m.id = ANY(%(ids)s::text[]::uuid[])
    """
)


async def settle(
    conn: Conn, message_id: str, now: datetime, *, extra: dict[str, Any] | None = None
) -> tuple[str, str]:
    """Re-derive the message status; write the event of a change. (old, new)."""
    row = await _SETTLE_READ.fetch_one(conn, {"id": message_id})
    if row is None:
        return ("", "")
    old = row["status"]
    new = _derive(row["counts"] or {}, old)
    if new == old:
        return (old, new)
    # Like a queue file: once every recipient is final the raw is not needed
    # (the API keeps its own copy of what was sent, a client its Sent folder),
    # and the panel's one-time links must not outlive their delivery.
    erase = new in MESSAGE_FINAL
    await _SETTLE_WRITE.execute(conn, {"status": new, "now": now, "id": message_id, "erase": erase})
    await _settled_event(conn, {**row, "id": message_id}, new, now, extra)
    return (old, new)


async def _settled_event(
    conn: Conn, row: dict[str, Any], new: str, now: datetime, extra: dict[str, Any] | None
) -> None:
    """The event of a message's new status, if it has one (with the group commit's
    other rows when settled in one: the worker's)."""
    event = _EVENT_OF.get(new)
    if event and row["account_id"] and row["source"] not in SILENT_SOURCES:
        data = dict(row["event_data"] or {})
        if extra:
            data.update(extra)
        await events.add(conn, row["account_id"], event, data, now, email_id=row["id"])


async def record_bounce_event(
    conn: Conn, message_id: str, rcpt: str, reply: str, now: datetime, *, kind: str = "Permanent"
) -> None:
    """email.bounced for one recipient, in Resend's shape."""
    target = await event_target(conn, message_id)
    if target is None or not target["account_id"]:
        return
    data = dict(target["event_data"] or {})
    data["bounce"] = {
        "message": reply,
        "type": kind,
        "subType": "Suppressed" if reply.startswith("suppressed") else "General",
        "recipient": rcpt,
    }
    await events.record(conn, target["account_id"], "email.bounced", data, now, email_id=message_id)


async def record_suppressed_event(conn: Conn, message_id: str, rcpt: str, now: datetime) -> None:
    """email.suppressed for one recipient, written where its status becomes 'suppressed'."""
    target = await event_target(conn, message_id)
    if target is None or not target["account_id"]:
        return
    data = dict(target["event_data"] or {})
    data["suppressed"] = {"message": SUPPRESSED_MESSAGE, "type": SUPPRESSED_TYPE, "recipient": rcpt}
    await events.record(
        conn, target["account_id"], "email.suppressed", data, now, email_id=message_id
    )


@dataclass(frozen=True)
class VerpMatch(Record):
    message_id: str
    position: int
    rcpt: str
    account_id: str | None
    status: str


async def by_verp(conn: Conn, token: str) -> VerpMatch | None:
    row = await fetch_one(
        conn,
        """
        SELECT r.message_id::text, r.position, r.rcpt, m.account_id::text, r.status
          FROM mta.outbound_recipients r JOIN mta.outbound_messages m ON m.id = r.message_id
         WHERE r.verp = %s
        """,
        (token,),
    )
    return VerpMatch.from_optional(row)


async def mark_complained(conn: Conn, message_id: str, now: datetime) -> None:
    """A recipient reported the message as abuse (an ARF report came back)."""
    await execute(
        conn,
        "UPDATE mta.outbound_messages SET status = 'complained', updated_at = %s WHERE id = %s",
        (now, message_id),
    )


async def recipients_of(conn: Conn, message_id: str) -> list[dict[str, Any]]:
    return await fetch_all(
        conn,
        "SELECT position, rcpt, status, last_reply, destination FROM mta.outbound_recipients"
        " WHERE message_id = %s ORDER BY position",
        (message_id,),
    )


# The outbound queue's part of the /metrics scrape (common/metrics.py queue_sql):
# recipients still to try and the oldest due message, both through the
# outbound_recipients_due partial index.
QUEUE_GAUGE_COLUMNS = """
       (SELECT count(*) FROM mta.outbound_recipients
         WHERE next_attempt_at IS NOT NULL) AS outbound_pending,
       (SELECT min(coalesce(m.scheduled_at, m.created_at))
          FROM mta.outbound_recipients r JOIN mta.outbound_messages m ON m.id = r.message_id
         WHERE r.next_attempt_at IS NOT NULL
           AND coalesce(m.scheduled_at, m.created_at) <= %(now)s) AS outbound_oldest_due"""


async def next_due(conn: Conn) -> datetime | None:
    row = await fetch_one(
        conn,
        "SELECT min(next_attempt_at) AS due FROM mta.outbound_recipients"
        " WHERE next_attempt_at IS NOT NULL",
    )
    return row["due"] if row else None
