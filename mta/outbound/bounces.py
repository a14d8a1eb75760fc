"""Asynchronous bounces and complaints: reports that come back after a remote said 250.

Mail that leaves with a VERP Return-Path, ``bounces+<token>@<sending domain>``
(mta/outbound/worker.py), names its recipient in the address a report is
sent to. The inbound daemon accepts RCPT to such an address when the token
is one of ours (mta/smtp/rcpt.py) and hands the message here instead of to
a mailbox:

* a DSN (RFC 3464, multipart/report; report-type=delivery-status) whose
  action is ``failed`` with a 5.x.x status: the recipient becomes 'bounced',
  an ``email.bounced`` event is written, and an address failure (5.1.x)
  suppresses the address, as a bounce during the SMTP session does;
* a feedback report (ARF, RFC 5965, report-type=feedback-report): the
  recipient complained; the address is suppressed (reason 'complaint') and
  ``email.complained`` is written;
* anything else (an auto-reply, a delay notice): dropped.

One transaction per report, so the state change and its event go together.
"""

from __future__ import annotations

import email
import logging
from dataclasses import dataclass
from datetime import datetime
from email.message import Message
from email.policy import compat32

from common.db import Conn
from mta.outbound import dsn
from mta.store import events, outbound, suppressions

log = logging.getLogger(__name__)

PREFIX = "bounces+"


def token_of(local_part: str) -> str | None:
    """The VERP token of ``bounces+<token>``, or None."""
    lowered = local_part.lower()
    if not lowered.startswith(PREFIX):
        return None
    token = lowered[len(PREFIX) :]
    return token if token and token.isalnum() and len(token) <= 64 else None


@dataclass(frozen=True)
class Report:
    kind: str  # 'bounce' | 'complaint'
    reply: str


def classify(raw: bytes) -> Report | None:
    msg = email.message_from_bytes(raw, policy=compat32)
    if msg.get_content_type() != "multipart/report":
        return None
    report_type = str(msg.get_param("report-type", "")).lower()
    parts = msg.get_payload()
    if not isinstance(parts, list):
        return None
    if report_type == "feedback-report":
        return Report("complaint", "complaint: the recipient reported the message as abuse")
    if report_type != "delivery-status":
        return None
    for part in parts:
        if isinstance(part, Message) and part.get_content_type() == "message/delivery-status":
            return _failed(part)
    return None


def _failed(part: Message) -> Report | None:
    blocks = part.get_payload()
    if not isinstance(blocks, list):
        return None
    # The first block is per message; the rest are per recipient.
    for block in blocks[1:] or blocks:
        if not isinstance(block, Message):
            continue
        action = str(block.get("Action", "")).strip().lower()
        status = str(block.get("Status", "")).strip()
        if action == "failed" and status.startswith("5"):
            diagnostic = str(block.get("Diagnostic-Code", "")).partition(";")[2].strip()
            return Report("bounce", f"{status} {diagnostic or 'reported by the remote server'}")
    return None


async def record(conn: Conn, token: str, raw: bytes, now: datetime) -> str | None:
    """Apply the report to the recipient its token names; what was recorded, or None."""
    match = await outbound.by_verp(conn, token)
    report = classify(raw)
    if match is None or report is None:
        return None
    account_id = match.account_id
    if report.kind == "complaint":
        if account_id:
            await suppressions.ensure(
                conn, account_id, match.rcpt, "complaint", now, match.message_id
            )
        await outbound.mark_complained(conn, match.message_id, now)
        target = await outbound.event_target(conn, match.message_id)
        if target and target["account_id"]:
            data = dict(target["event_data"] or {})
            await events.record(
                conn,
                target["account_id"],
                "email.complained",
                data,
                now,
                email_id=match.message_id,
            )
        return "complaint"
    if match.status == "bounced":
        return None  # already known (a second report of the same failure)
    await outbound.record_outcome(
        conn,
        outbound.Outcome(
            match.message_id, match.position, "bounced", report.reply, attempted=False
        ),
        now,
    )
    if account_id and _address_failure(report.reply):
        await suppressions.ensure(conn, account_id, match.rcpt, "bounce", now, match.message_id)
    await outbound.record_bounce_event(conn, match.message_id, match.rcpt, report.reply, now)
    await outbound.settle(conn, match.message_id, now)
    return "bounce"


def _address_failure(reply: str) -> bool:
    # The report's Status leads the reply: 5.1.x says the address is bad.
    return dsn.status_of(reply).startswith("5.1.")
