"""The Overview's hook for running transfers.

Mail transfers (IMAP import, mail/transfers/) are another engineer's work and
not on this branch. When they land, this function answers the account's
transfers in a non-terminal state, newest first, each as the transfers
serializer shapes it (id, state, source host, destination, progress); the
Overview puts the list under ``transfers.running`` unchanged. Its test
(tests/mail/test_overview.py) replaces it to show the list flows through.
"""

from __future__ import annotations

from typing import Any

from common.db import Conn


async def running(conn: Conn, account_id: str) -> list[dict[str, Any]]:
    return []  # no transfers exist on this branch yet (see the module docstring)
