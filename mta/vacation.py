"""The vacation responder (RFC 8621 8, RFC 3834, RFC 5230): one reply per sender per period.

Run by delivery after its commit, for the recipients whose VacationResponse
is enabled and in its dates. No reply goes to:

* a null or daemon envelope sender (``<>``, MAILER-DAEMON, owner-*, *-request),
* a message with ``Auto-Submitted`` other than ``no`` (RFC 3834 5),
* list or bulk mail (``List-Id``, ``List-Unsubscribe``, ``List-Post``,
  ``Precedence: bulk|list|junk``),
* a message that does not name the address in To or Cc (RFC 5230 4.5: a Bcc
  or a list expansion), or one that was filed as junk,
* the address itself,
* a sender answered in the last ``PERIOD`` (7 days, RFC 5230's default);
  editing or re-enabling the response starts the count again.

The reply has a null envelope sender, ``Auto-Submitted: auto-replied``, and
``In-Reply-To``/``References`` to the original. It goes out through the
outbound queue (mta/store/outbound.py, source 'system': signed with the
domain's DKIM key, no email.* events, no DSN since its sender is null) in
the delivery's reply transaction; ``mta.auto_replies`` keeps the record
(status 'sent' once queued, ``outbound_id`` naming the queued message).
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from common.db import Conn
from mta.message import ParsedMessage, header_values
from mta.outbound.submit import (
    Submission,
    submit,
)
from mta.store import emails, vacation

log = logging.getLogger(__name__)

PERIOD = timedelta(days=7)
DAEMON_LOCALS = ("mailer-daemon", "postmaster", "listserv", "majordomo", "noreply", "no-reply")
LIST_FIELDS = ("list-id", "list-unsubscribe", "list-post", "list-help")


def should_answer(mail_from: str, parsed: ParsedMessage, address: str) -> bool:
    """RFC 3834 / RFC 5230 rules that depend only on the message and the recipient."""
    sender = mail_from.strip().lower()
    if not sender or "@" not in sender:
        return False
    local = sender.rsplit("@", 1)[0]
    if local in DAEMON_LOCALS or local.startswith("owner-") or local.endswith("-request"):
        return False
    if sender == address.lower():
        return False
    msg = parsed.message
    for value in header_values(msg, "auto-submitted"):
        if value.strip().lower().split(";")[0].strip() != "no":
            return False
    if any(header_values(msg, name) for name in LIST_FIELDS):
        return False
    for value in header_values(msg, "precedence"):
        if value.strip().lower() in ("bulk", "list", "junk"):
            return False
    named = {a.get("email", "").lower() for a in [*parsed.to_addrs, *parsed.cc_addrs]}
    return address.lower() in named


async def answering(
    conn: Conn, delivered: dict[str, tuple[str | None, str, str]], now: datetime
) -> bool:
    """Whether a response of an address in ``delivered`` answers now: one read, so a
    delivery to mailboxes without one (nearly all) opens no reply transaction."""
    ids = [a for a, (email_id, *_) in delivered.items() if email_id is not None]
    return bool(ids) and bool(await vacation.active(conn, ids, now))


async def respond(
    conn: Conn,
    *,
    mail_from: str,
    parsed: ParsedMessage,
    delivered: dict[str, tuple[str | None, str, str]],
    now: datetime,
    max_lifetime: int,
) -> int:
    """Queue the vacation replies this delivery earns; the number queued.

    ``delivered`` maps address id -> (the email stored for it or None when a
    filter discarded it, the address, the panel account that owns it).
    """
    ids = [a for a, (email_id, *_) in delivered.items() if email_id is not None]
    if not ids:
        return 0
    rows = await vacation.active(conn, ids, now)
    sent = 0
    for row in rows:
        email_id, address, account_id = delivered[row.address_id]
        # No auto-reply to mail filed as junk: it would confirm the address to spam.
        if not should_answer(mail_from, parsed, address) or await emails.in_junk(conn, email_id):
            continue
        sender = mail_from.strip().lower()
        if not await vacation.claim_reply(conn, row.address_id, sender, now, PERIOD):
            continue
        reply = build_reply(
            address=address,
            name=row.identity_name or "",
            to=mail_from.strip(),
            parsed=parsed,
            subject=row.subject,
            text=row.text_body,
            html=row.html_body,
            now=now,
        )
        outbound_id = str(uuid.uuid4())
        # RFC 3834 3.3 / RFC 5230 5: a null envelope sender, so nothing answers the answer.
        await submit(
            conn,
            Submission(
                message_id=outbound_id,
                source="system",
                mail_from="",
                recipients=[mail_from.strip()],
                raw=reply,
                account_id=account_id,
                address_id=row.address_id,
            ),
            now=now,
            max_lifetime=max_lifetime,
        )
        await vacation.record_reply(
            conn, row.address_id, mail_from.strip(), reply, now, outbound_id
        )
        sent += 1
    return sent


def build_reply(
    *,
    address: str,
    name: str,
    to: str,
    parsed: ParsedMessage,
    subject: str | None,
    text: str | None,
    html: str | None,
    now: datetime,
) -> bytes:
    msg = EmailMessage()
    msg["From"] = f"{name} <{address}>" if name else address
    msg["To"] = to
    msg["Subject"] = subject or f"Auto: {parsed.subject}".strip()
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = make_msgid(domain=address.rsplit("@", 1)[-1])
    msg["Auto-Submitted"] = "auto-replied"
    if parsed.message_id:
        msg["In-Reply-To"] = f"<{parsed.message_id}>"
        refs = [*parsed.references, parsed.message_id][-20:]
        msg["References"] = " ".join(f"<{r}>" for r in refs)
    msg.set_content(text or "I am away and will read your message when I return.")
    if html:
        msg.add_alternative(html, subtype="html")
    return msg.as_bytes()
