"""The panel's own events (domain.*, address.*), written in the caller's transaction.

Domains and addresses call these inside the transaction of the change, so an
event exists exactly when its change committed (the event log's rule,
mta/store/events.py). The ``data`` objects follow Resend's domain events
where Resend has them; docs/mail.md lists every field.
"""

from __future__ import annotations

from datetime import datetime

from common.db import Conn
from mail.addresses.store import Address
from mail.domains.store import Domain
from mail.webhooks.events import iso
from mta import mailstore


async def domain_event(conn: Conn, type_: str, domain: Domain, now: datetime) -> None:
    data = {
        "id": domain.id,
        "name": domain.name,
        "status": domain.dns_status,
        "created_at": iso(domain.created_at),
    }
    await mailstore.record_event(conn, domain.account_id, type_, data, now)


async def address_event(conn: Conn, type_: str, address: Address, now: datetime) -> None:
    data = {
        "id": address.id,
        "email": address.email,
        "domain_id": address.domain_id,
        "display_name": address.display_name,
        "quota_bytes": address.quota_bytes,
        "created_at": iso(address.created_at),
    }
    await mailstore.record_event(conn, address.account_id, type_, data, now)
