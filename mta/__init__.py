"""Protocol daemons and mail storage: SMTP, submission, DKIM, queue, mailbox store, JMAP."""

from __future__ import annotations

from common.migrations import MigrationSet

MIGRATIONS = MigrationSet.beside(__file__)
