"""Queue a message the panel sends itself, inside the caller's transaction.

It goes on the mta's outbound queue like all mail that leaves (source
'system'), sealed at rest because it carries one-time links, and its raw is
erased once delivered or failed (mta/store/outbound.py). System mail writes
no email.* events: the account's webhooks report the mail it sends.
"""

from __future__ import annotations

import logging
import uuid

from common.db import Conn
from common.logs import REVEAL
from mail.context import MailContext
from mail.outbox.messages import Outgoing, build
from mta import mailstore

log = logging.getLogger(__name__)


async def send(conn: Conn, ctx: MailContext, outgoing: Outgoing, *, account_id: str | None) -> str:
    """Queue the full MIME message for the MTA; in development, log its link too."""
    now = ctx.clock.now()
    message_id = str(uuid.uuid4())
    raw = build(outgoing, mail_from=ctx.config.mail_from, now=now)
    await mailstore.submit(
        conn,
        mailstore.Submission(
            message_id=message_id,
            source="system",
            mail_from=ctx.config.mail_from,
            recipients=[outgoing.to],
            raw=raw,
            account_id=account_id,
            # What the queue shows in the clear: never the link.
            event_data={
                "email_id": message_id,
                "kind": outgoing.kind,
                "from": ctx.config.mail_from,
                "to": [outgoing.to],
                "subject": outgoing.subject,
            },
            sealer=mailstore.outbound_sealer(ctx.settings.secret),
        ),
        now=now,
        max_lifetime=ctx.config.outbound_max_lifetime,
    )
    # Links carry one-time tokens: only a development instance may log them.
    if ctx.settings.is_development and outgoing.link:
        # Marked for common.logs.Redact, which masks tokens everywhere else.
        log.info("%s for %s: %s", outgoing.kind, outgoing.to, outgoing.link, extra={REVEAL: True})
    return message_id
