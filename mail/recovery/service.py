"""Mailbox recovery for mailbox owners who are not panel users.

``request`` answers the same, in the same time, whatever the address: it only
counts the rate limits and enqueues a job; the job looks the address up and,
when it exists and has a recovery address, mails a one-time link there
(mail/outbox, sealed at rest, like the panel's own reset links). The token is
256 random bits kept only as SHA-256, works once and for 30 minutes, and a
new request voids the earlier ones. ``reset`` sets the new mailbox password
(the service's password rules), ends the mailbox's webmail sessions and
mails a notice to the recovery address.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from common.crypto import sha256_hex
from common.ids import random_id
from common.jobs import Job
from common.passwords import hash_password
from mail.accounts.service import check_new_password
from mail.addresses.localpart import InvalidLocalPart, normalize_local_part
from mail.addresses.webmail_sessions import end_webmail_sessions
from mail.context import MailContext
from mail.domains.names import InvalidDomainName, normalize_domain
from mail.errors import invalid_parameter, rate_limit_exceeded, validation_error
from mail.outbox import messages
from mail.outbox.service import send
from mail.recovery import store

REQUEST_JOB = "mail.recovery_request"
LINK_MINUTES = 30
TOKEN_LIFETIME = timedelta(minutes=LINK_MINUTES)
MAX_TOKEN_LENGTH = 200
MAX_EMAIL = 254
# Beyond the per-IP sign-in budget (mail/web/ratelimit.py): links per address
# and requests per IP per hour, so nobody floods a recovery mailbox.
PER_ADDRESS_PER_HOUR = 3
PER_IP_PER_HOUR = 20
HOUR = 3600.0


@dataclass(frozen=True)
class Check:
    domain: str
    available: bool


def _split(email: str) -> tuple[str, str] | None:
    """``local@domain`` in stored form, or None for what could not be an address."""
    local, at, domain = email.strip().rpartition("@")
    if not at or not local or not domain:
        return None
    try:
        return normalize_local_part(local), normalize_domain(domain)
    except (InvalidLocalPart, InvalidDomainName):
        return None


async def check(ctx: MailContext, raw_domain: str) -> Check:
    """Whether the domain exists here with an address that has a recovery address."""
    try:
        domain = normalize_domain(raw_domain)
    except InvalidDomainName as exc:
        raise invalid_parameter(f"domain: {exc}") from None
    async with ctx.db.connection() as conn:
        return Check(domain, await store.domain_offers_recovery(conn, domain))


async def request(ctx: MailContext, email: str, ip: str) -> None:
    """The same work for every address: two counters and a job."""
    key = email.strip().lower()
    for limit_key, limit in (
        (f"mail:recover-ip:{ip}", PER_IP_PER_HOUR),
        (f"mail:recover-address:{sha256_hex(key)}", PER_ADDRESS_PER_HOUR),
    ):
        decision = await ctx.limiter.hit(limit_key, limit, HOUR)
        if not decision.allowed:
            # Counted on what was typed, existing or not: a 429 says nothing either.
            raise rate_limit_exceeded(decision.headers())
    await ctx.runtime.jobs.enqueue(REQUEST_JOB, {"email": key}, max_attempts=3)


async def run_request_job(ctx: MailContext, job: Job) -> None:
    parts = _split(str(job.payload.get("email", "")))
    if parts is None:
        return
    async with ctx.db.transaction() as conn:
        found = await store.recoverable(conn, *parts)
        if found is None:
            return
        now = ctx.clock.now()
        await store.void_tokens(conn, found.address_id, now)
        token = random_id()
        await store.insert_token(
            conn, found.address_id, sha256_hex(token), now, now + TOKEN_LIFETIME
        )
        link = f"{ctx.settings.public_url}/recover?token={token}"
        await send(
            conn,
            ctx,
            messages.mailbox_recovery(
                found.recovery_email, found.email, link, minutes=LINK_MINUTES
            ),
            account_id=None,
        )


async def reset(ctx: MailContext, token: str, password: str) -> str:
    """Redeem the token: the new password, sessions ended; returns the mailbox's email."""
    check_new_password(password)
    password_hash = await hash_password(password)
    async with ctx.db.transaction() as conn:
        now = ctx.clock.now()
        address_id = None
        if len(token) <= MAX_TOKEN_LENGTH:
            address_id = await store.redeem(conn, sha256_hex(token), now)
        if address_id is None:
            raise validation_error("token is invalid, used or expired")
        email = await store.set_password(conn, address_id, password_hash, now)
        await store.void_tokens(conn, address_id, now)
        await end_webmail_sessions(conn, address_id, now)
        found = await store.recoverable(conn, *email.split("@", 1))
        if found is not None:
            await send(
                conn,
                ctx,
                messages.mailbox_reset_notice(found.recovery_email, email),
                account_id=None,
            )
    return email
