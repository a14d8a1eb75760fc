"""Protocol daemons and mail storage: SMTP, submission, DKIM, queue, mailbox store, JMAP."""

from __future__ import annotations

from pathlib import Path

from common.migrations import MigrationSet

MIGRATIONS = MigrationSet("mta", Path(__file__).parent / "migrations")
