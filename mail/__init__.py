"""The mail hosting HTTP API: panel, sending API, webmail and well-known routes.

The service is loaded on first use of a name below (PEP 562), not by
``import mail``: the protocol daemons import :mod:`mail.directory` alone, and
a package import must not drag the whole service (its pages, Stripe) in
behind it (tests/test_boundaries.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mail.accounts.public import Account, PublicAccounts
    from mail.service import MIGRATIONS, MailService

__all__ = ["MIGRATIONS", "Account", "MailService", "PublicAccounts"]


def __getattr__(name: str) -> Any:
    if name in ("Account", "PublicAccounts"):
        from mail.accounts import public

        return getattr(public, name)
    if name in ("MIGRATIONS", "MailService"):
        from mail import service

        return getattr(service, name)
    raise AttributeError(f"module 'mail' has no attribute {name!r}")
