"""One way to send: every message that leaves goes through :func:`submit`.

The sending API, webmail, SMTP submission, JMAP EmailSubmission, vacation
replies, Sieve redirects, returned bounces, the worker's DSNs and the panel's
own mail each build a :class:`Submission` and call :func:`submit` in their
transaction. It applies, in one place:

* the plan's sends_per_month (:attr:`Submission.sends`): counted here
  (``COUNT``), already counted by the caller for a batch or outside a group
  commit (``RESERVED``, with :func:`reserve_sends`), or not a send (``NONE``:
  system mail, replies a delivery earns, bounces);
* the sender rule where a person signed in sends (:func:`may_send_as`:
  submission, JMAP), checked when :attr:`Submission.login` is set;
* OUTBOUND_MAX_LIFETIME, the time the queue keeps trying (the caller's
  setting, read once in common/mail_settings.py);
* the queue rows, with the email.* events and activity the store and the
  worker write for them (mta/store/outbound.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any

from common.crypto import Sealer
from common.db import Conn
from mail import directory
from mta.store import outbound


class Sends(Enum):
    COUNT = "count"
    RESERVED = "reserved"
    NONE = "none"


class SendRefused(Exception):
    """The plan's sends are used up, or the sender is not the signed-in address."""

    def __init__(self, message: str, *, sender: bool = False) -> None:
        super().__init__(message)
        self.message = message
        # True: the sender rule refused (JMAP forbiddenMailFrom); else the plan.
        self.sender = sender


@dataclass(frozen=True)
class Submission:
    message_id: str
    # Who sends: 'api', 'webmail', 'submission', 'jmap', 'redirect', 'system'.
    source: str
    # The envelope: the reverse path ('' for the null sender) and the recipients.
    mail_from: str
    recipients: list[str]
    raw: bytes
    # The panel account the send counts against (None: the instance's own mail).
    account_id: str | None
    # The hosted address that sends, when one does; the caller knows it, or
    # :func:`sender_address` finds it by the envelope sender.
    address_id: str | None = None
    sends: Sends = Sends.NONE
    # The address that signed in (submission, JMAP): the sender rule applies.
    login: str | None = None
    # Held until then (JMAP FUTURERELEASE, the API's scheduled_at).
    send_at: datetime | None = None
    # The Resend ``data`` of its events (built from the headers when None).
    event_data: dict[str, Any] | None = None
    # Seals a raw that carries one-time links at rest (the panel's mail).
    sealer: Sealer | None = None


def may_send_as(login: str, address: str) -> bool:
    """The login's own address, or a +tag of it (user+news@example.com)."""
    address = address.strip().lower()
    if address == login:
        return True
    local, _, domain = address.rpartition("@")
    own_local, _, own_domain = login.rpartition("@")
    base = local.split(directory.SUBADDRESS_DELIMITER, 1)[0]
    return domain == own_domain and base == own_local and local != base


async def reserve_sends(conn: Conn, account_id: str, count: int, now: datetime) -> str | None:
    """Count ``count`` sends against the plan ahead of :func:`submit` (``Sends.RESERVED``);
    None when they fit, else why not (nothing is counted)."""
    return await directory.reserve_sends(conn, account_id, count, now)


async def return_sends(conn: Conn, account_id: str, count: int, now: datetime) -> None:
    """Give back sends reserved for mail that was then not queued."""
    await directory.return_sends(conn, account_id, count, now)


async def sender_address(conn: Conn, mail_from: str) -> str | None:
    """The hosted address an envelope sender names (its +tag and the fallback domain
    as delivery resolves them), without the rest of the recipient lookup."""
    local, _, domain = mail_from.rpartition("@")
    if not (local and domain):
        return None
    return await directory.address_id_of(conn, local, domain.lower())


async def submit(conn: Conn, request: Submission, *, now: datetime, max_lifetime: int) -> None:
    """Queue ``request`` in the caller's transaction, durable when it commits.

    :class:`SendRefused` (nothing written) when the sender rule or the plan refuses.
    ``max_lifetime`` is OUTBOUND_MAX_LIFETIME in seconds.
    """
    if request.login is not None and not may_send_as(request.login, request.mail_from):
        raise SendRefused(f"the envelope sender must be {request.login}", sender=True)
    if request.sends is Sends.COUNT and request.account_id is not None:
        refused = await reserve_sends(conn, request.account_id, 1, now)
        if refused is not None:
            raise SendRefused(refused)
    address_id = request.address_id
    if address_id is None and request.mail_from:
        address_id = await sender_address(conn, request.mail_from)
    await outbound.enqueue(
        conn,
        message_id=request.message_id,
        account_id=request.account_id,
        address_id=address_id,
        source=request.source,
        mail_from=request.mail_from,
        recipients=request.recipients,
        raw=request.raw,
        now=now,
        scheduled_at=request.send_at,
        event_data=request.event_data,
        sealer=request.sealer,
        lifetime=timedelta(seconds=max_lifetime),
    )
