"""Ending a mailbox's webmail sessions: what a password change or a recovery reset calls.

Webmail (svc_webmail, a 12-hour session whose identity is the mailbox
address, mail/webmail/) keeps its sessions as rows; this deletes the
address's rows in the caller's transaction and answers how many ended, so
the next request of every signed-in browser of that mailbox is 401.
"""

from __future__ import annotations

from datetime import datetime

from common.db import Conn
from mail.webmail import store as webmail_store


async def end_webmail_sessions(conn: Conn, address_id: str, now: datetime) -> int:
    """Every webmail session of the mailbox ends now; returns how many did."""
    del now  # ended means deleted: nothing to stamp
    return await webmail_store.delete_for_address(conn, address_id)
