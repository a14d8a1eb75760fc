"""The mail hosting HTTP API: panel, sending API, webmail and well-known routes."""

from mail.accounts.public import Account, PublicAccounts
from mail.service import MIGRATIONS, MailService

__all__ = ["MIGRATIONS", "Account", "MailService", "PublicAccounts"]
