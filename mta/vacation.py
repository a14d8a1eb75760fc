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
``In-Reply-To``/``References`` to the original. There is no outbound queue yet
(the sending issue): replies are recorded in ``mta.auto_replies`` with status
``pending``, the raw message beside its envelope, for the sending work to
pick up exactly like Sieve redirects (``mta.redirects``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from common.db import Conn, execute, fetch_all, fetch_one
from mta.message import ParsedMessage, header_values

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


async def respond(
    conn: Conn,
    *,
    mail_from: str,
    parsed: ParsedMessage,
    delivered: dict[str, tuple[str | None, str]],
    now: datetime,
) -> int:
    """Record the vacation replies this delivery earns; the number recorded.

    ``delivered`` maps address id -> (the email stored for it or None when a
    filter discarded it, the address).
    """
    ids = [a for a, (email_id, _) in delivered.items() if email_id is not None]
    if not ids:
        return 0
    rows = await fetch_all(
        conn,
        """
        SELECT v.address_id::text AS address_id, v.subject, v.text_body, v.html_body,
               (SELECT i.name FROM mta.identities i WHERE i.address_id = v.address_id
                 ORDER BY i.created_at LIMIT 1) AS identity_name
          FROM mta.vacation_responses v
         WHERE v.address_id = ANY(%s::uuid[]) AND v.is_enabled
           AND (v.from_date IS NULL OR v.from_date <= %s)
           AND (v.to_date IS NULL OR v.to_date > %s)
        """,
        (ids, now, now),
    )
    sent = 0
    for row in rows:
        email_id, address = delivered[row["address_id"]]
        if not should_answer(mail_from, parsed, address) or await _junk(conn, email_id):
            continue
        sender = mail_from.strip().lower()
        # One reply per sender per period: the upsert wins only when the last is old.
        won = await fetch_one(
            conn,
            """
            INSERT INTO mta.vacation_replies (address_id, sender, replied_at) VALUES (%s, %s, %s)
            ON CONFLICT (address_id, sender) DO UPDATE SET replied_at = EXCLUDED.replied_at
             WHERE mta.vacation_replies.replied_at <= %s
            RETURNING 1 AS won
            """,
            (row["address_id"], sender, now, now - PERIOD),
        )
        if won is None:
            continue
        reply = build_reply(
            address=address,
            name=row["identity_name"] or "",
            to=mail_from.strip(),
            parsed=parsed,
            subject=row["subject"],
            text=row["text_body"],
            html=row["html_body"],
            now=now,
        )
        await execute(
            conn,
            """
            INSERT INTO mta.auto_replies (address_id, kind, mail_from, rcpt_to, message, created_at)
            VALUES (%s, 'vacation', '', %s, %s, %s)
            """,
            (row["address_id"], mail_from.strip(), reply, now),
        )
        sent += 1
    return sent


async def _junk(conn: Conn, email_id: str | None) -> bool:
    """Whether the email was filed as junk (no auto-reply confirms an address to spam)."""
    row = await fetch_one(
        conn,
        """
        SELECT 1 FROM mta.email_mailboxes em JOIN mta.mailboxes m ON m.id = em.mailbox_id
         WHERE em.email_id = %s AND m.role = 'junk'
        """,
        (email_id,),
    )
    return row is not None


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
