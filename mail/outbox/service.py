"""Queue a message in the outbox, inside the caller's transaction."""

from __future__ import annotations

import logging

from common.db import Conn
from mail.context import MailContext
from mail.outbox import store
from mail.outbox.messages import Outgoing, build

log = logging.getLogger(__name__)


async def send(conn: Conn, ctx: MailContext, outgoing: Outgoing, *, account_id: str | None) -> str:
    """Store the full MIME message, sealed, for the MTA; in development, log its link too."""
    now = ctx.clock.now()
    outbox_id = await store.insert(
        conn,
        ctx.outbox_sealer,
        account_id=account_id,
        kind=outgoing.kind,
        mail_from=ctx.config.mail_from,
        rcpt_to=outgoing.to,
        subject=outgoing.subject,
        message=build(outgoing, mail_from=ctx.config.mail_from, now=now),
        now=now,
    )
    # Links carry one-time tokens: only a development instance may log them.
    if ctx.settings.is_development and outgoing.link:
        log.info("%s for %s: %s", outgoing.kind, outgoing.to, outgoing.link)
    return outbox_id
