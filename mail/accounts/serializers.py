"""Response shapes of accounts, built only here.

The password hash and TOTP secrets are never part of a response.
"""

from __future__ import annotations

from typing import Any

from mail.accounts.service import SignupStatus, notifications_of
from mail.accounts.store import Account


def account(acc: Account) -> dict[str, Any]:
    return {
        "object": "account",
        "id": acc.id,
        "email": acc.email,
        "name": acc.name,
        "email_verified": acc.email_verified_at is not None,
        "email_verified_at": acc.email_verified_at,
        "totp_enabled": acc.totp_enabled,
        "is_owner": acc.is_owner,
        "notifications": notifications_of(acc),
        "referral_code": acc.referral_code,
        "created_at": acc.created_at,
        "updated_at": acc.updated_at,
    }


def signups(status: SignupStatus) -> dict[str, Any]:
    return {"object": "signups", "open": status.open, "first_account": status.first_account}


def notifications(prefs: dict[str, bool]) -> dict[str, Any]:
    return {"object": "notification_preferences", **prefs}


def referrals(acc: Account, url: str, signups: int, verified: int) -> dict[str, Any]:
    return {
        "object": "referrals",
        "code": acc.referral_code,
        "url": url,
        "signups": signups,
        "verified_signups": verified,
    }


def email_change(pending_email: str) -> dict[str, Any]:
    return {"object": "email_change", "pending_email": pending_email, "verification_sent": True}


def accepted(kind: str, message: str) -> dict[str, Any]:
    """The reply to a request whose result arrives by mail."""
    return {"object": kind, "message": message}
