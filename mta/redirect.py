"""Sieve ``redirect`` (RFC 5228 4.2): the message sent on through the outbound queue.

Delivery (mta/delivery.py) calls :func:`loop_reason` while it runs a
mailbox's filter actions, and :func:`queue` in the same transaction that
stores the message, so a redirect is queued exactly when the message is
accepted (nothing answered 250 is lost, the redirect included). What leaves:

* the message as stored (our Received and Authentication-Results on top),
  with ``Delivered-To: <the mailbox>`` prepended. That field is the loop
  check (RFC 5228 4.2 asks for one; Postfix's "mail forwarding loop" test is
  the same): a message that already carries it for this mailbox went through
  us once and is not redirected again. Past :data:`MAX_HOPS` Received fields
  (RFC 5321 6.3; Postfix's hopcount_limit) it is not redirected either;
* every redirect target of the message in one queued message (RFC 5228 4.2
  allows it), counted as one send against the plan's ``sends_per_month`` like
  any other (refused past it: the message is kept in the Inbox instead);
* its envelope sender rewritten by SRS under the mailbox's domain
  (mta/srs.py), so the receiver's SPF check asks that domain, which names us;
* enqueued with the one function every sending path uses
  (mta/store/outbound.py ``enqueue``), source ``redirect``: the worker signs,
  delivers, retries, writes the activity and the email.* events of any other
  send, and a permanent failure sends the DSN to the original sender.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime

from common.db import Conn
from mail.directory import Recipient
from mta.context import MtaContext
from mta.outbound.submit import (
    SendRefused,
    Sends,
    Submission,
    submit,
)
from mta.srs import Srs

SOURCE = "redirect"
# RFC 5321 6.3: a message with this many Received fields is looping.
MAX_HOPS = 50
_RECEIVED = re.compile(rb"^received[ \t]*:", re.IGNORECASE | re.MULTILINE)


def srs(ctx: MtaContext) -> Srs:
    clock = ctx.runtime.clock
    return Srs(ctx.runtime.settings.secret, clock=lambda: clock.now().timestamp())


def loop_reason(stored: bytes, mailbox: str, target: str) -> str | None:
    """Why redirecting ``stored`` from ``mailbox`` to ``target`` would loop, or None."""
    if target.lower() == mailbox.lower():
        return f"redirect to {target} loops: it is this mailbox"
    head = stored.split(b"\r\n\r\n", 1)[0].replace(b"\r\n", b"\n")
    own = re.escape(mailbox.lower().encode())
    if re.search(rb"^delivered-to[ \t]*:[ \t]*<?" + own + rb">?[ \t]*$", head, re.I | re.M):
        return f"redirect to {target} loops: the message already went through {mailbox}"
    if len(_RECEIVED.findall(head)) >= MAX_HOPS:
        return f"redirect to {target} loops: {MAX_HOPS} Received fields or more"
    return None


async def queue(
    ctx: MtaContext,
    conn: Conn,
    *,
    mailbox: Recipient,
    targets: list[str],
    envelope_from: str,
    stored: bytes,
    now: datetime,
) -> str | None:
    """Queue the redirect in the caller's transaction; None, or why it was not sent."""
    domain = mailbox.email.rpartition("@")[2]
    try:
        await submit(
            conn,
            Submission(
                message_id=str(uuid.uuid4()),
                source=SOURCE,
                mail_from=srs(ctx).forward(envelope_from, domain),
                recipients=targets,
                raw=f"Delivered-To: {mailbox.email}\r\n".encode() + stored,
                account_id=mailbox.account_id,
                address_id=mailbox.address_id,
                sends=Sends.COUNT,
            ),
            now=now,
            max_lifetime=ctx.config.outbound_max_lifetime,
        )
    except SendRefused as exc:
        return f"redirect not sent: {exc.message}"
    return None
