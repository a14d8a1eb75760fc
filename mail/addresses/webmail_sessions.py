"""Ending a mailbox's webmail sessions: the hook a recovery reset calls.

Webmail (svc_webmail, a 12-hour session whose identity is the mailbox
address) is not built yet. When it is, this function deletes the address's
webmail session rows in the caller's transaction and answers how many ended;
the recovery reset (mail/recovery/service.py) already calls it in the
transaction that sets the new password, and its test checks the call. The
panel's own password change (addresses/service.py change_password) should
call it too once sessions exist.
"""

from __future__ import annotations

from datetime import datetime

from common.db import Conn


async def end_webmail_sessions(conn: Conn, address_id: str, now: datetime) -> int:
    """Every webmail session of the mailbox ends now; returns how many did."""
    return 0  # no webmail sessions exist yet (see the module docstring)
