"""DATA: deliver, and answer 250 only once everything is committed."""

from __future__ import annotations

import logging
import uuid

from mta.context import MtaContext
from mta.delivery import Inbound, deliver
from mta.outbound import bounces
from mta.outbound.submit import (
    Submission,
    submit,
)
from mta.smtp import replies

log = logging.getLogger(__name__)


async def receive(ctx: MtaContext, inbound: Inbound) -> str:
    if not inbound.recipients:
        return replies.NEED_RECIPIENTS
    if b"\x00" in inbound.raw:
        return replies.NUL_IN_CONTENT
    try:
        report = await deliver(ctx, inbound)
    except Exception:
        # Nothing was committed (one transaction), so a temporary failure is honest:
        # the sending MTA keeps the message and tries again.
        log.exception("delivery failed; answered 451")
        return replies.TEMPORARY_FAILURE
    if report.refused == "dmarc":
        return replies.DMARC_REJECT
    return replies.queued(report.queue_id)


async def receive_reports(ctx: MtaContext, tokens: list[str], raw: bytes) -> str:
    """Bounce and complaint reports to our VERP addresses, recorded before the 250."""
    try:
        async with ctx.runtime.db.transaction() as conn:
            for token in tokens:
                await bounces.record(conn, token, raw, ctx.runtime.clock.now())
    except Exception:
        log.exception("recording a bounce report failed; answered 451")
        return replies.TEMPORARY_FAILURE
    return replies.OK


async def return_bounces(ctx: MtaContext, originals: list[str], raw: bytes) -> str:
    """A bounce of redirected mail, to the senders its SRS addresses stood for.

    Queued before the 250 as system mail with the null sender (a bounce stays
    a bounce, RFC 5321 4.5.5); the outbound worker delivers it like any other."""
    now = ctx.runtime.clock.now()
    try:
        async with ctx.runtime.db.transaction() as conn:
            await submit(
                conn,
                Submission(
                    message_id=str(uuid.uuid4()),
                    source="system",
                    mail_from="",
                    recipients=originals,
                    raw=raw,
                    account_id=None,
                ),
                now=now,
                max_lifetime=ctx.config.outbound_max_lifetime,
            )
    except Exception:
        log.exception("queueing a returned bounce failed; answered 451")
        return replies.TEMPORARY_FAILURE
    return replies.OK
