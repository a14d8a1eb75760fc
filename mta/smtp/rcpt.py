"""RCPT TO: hosted, unknown, not ours (no relay), or over quota."""

from __future__ import annotations

from dataclasses import dataclass

from mail.directory import Recipient, lookup_recipient
from mta import redirect, srs
from mta.context import MtaContext
from mta.outbound import bounces
from mta.smtp import replies
from mta.smtp.mail import has_forbidden_character
from mta.srs import SrsError
from mta.store import outbound


@dataclass(frozen=True)
class Decision:
    reply: str
    mailbox: Recipient | None = None
    # A VERP address of mail we sent (bounces+<token>@...): the report goes to
    # mta/outbound/bounces.py, not to a mailbox.
    bounce_token: str | None = None
    # An SRS address of a redirect we sent (mta/srs.py): the bounce goes on to
    # this original sender, not to a mailbox.
    srs_return: str | None = None


def split_address(address: str) -> tuple[str, str] | None:
    """(local part, domain as lower-case IDNA ASCII), or None."""
    local, at, domain = address.rpartition("@")
    if not at or not local or not domain or len(address) > 320 or has_forbidden_character(address):
        return None
    domain = domain.strip().rstrip(".").lower()
    try:
        domain = domain.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    return local, domain


async def decide(ctx: MtaContext, address: str, declared_size: int, sender: str = "") -> Decision:
    parts = split_address(address)
    if parts is None:
        return Decision(replies.BAD_RECIPIENT_SYNTAX)
    local, domain = parts
    token = bounces.token_of(local)
    async with ctx.runtime.db.connection() as conn:
        if token is not None and await outbound.by_verp(conn, token) is not None:
            return Decision(replies.RECIPIENT_OK, bounce_token=token)
        found = await lookup_recipient(conn, local, domain)
    if not found.domain_hosted:
        return Decision(replies.RELAY_DENIED)
    if srs.is_srs(local):
        return _srs_return(ctx, local, sender)
    if found.mailbox is None:
        return Decision(replies.UNKNOWN_USER)
    if found.mailbox.over_plan_storage(declared_size):
        return Decision(replies.PLAN_STORAGE_FULL, found.mailbox)
    if found.mailbox.over_quota(declared_size):
        return Decision(replies.OVER_QUOTA, found.mailbox)
    return Decision(replies.RECIPIENT_OK, found.mailbox)


def _srs_return(ctx: MtaContext, local: str, sender: str) -> Decision:
    """RCPT to an SRS address of a hosted domain: a bounce of mail a redirect sent."""
    try:
        original = redirect.srs(ctx).reverse(local)
    except SrsError:
        return Decision(replies.UNKNOWN_USER)  # not ours, or too old: no one here
    if sender:
        # Only bounces (the null reverse-path, RFC 5321 4.5.5) go back this way:
        # anything else would make the address a relay to whoever it names.
        return Decision(replies.SRS_NOT_A_BOUNCE)
    return Decision(replies.RECIPIENT_OK, srs_return=original)
