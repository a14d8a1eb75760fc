"""The mail hosting HTTP API: panel, sending API, webmail and well-known routes."""

from mail.service import MIGRATIONS, MailService

__all__ = ["MIGRATIONS", "MailService"]
