"""The messages the panel sends, built as complete RFC 5322 messages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, make_msgid


@dataclass(frozen=True)
class Outgoing:
    kind: str
    to: str
    subject: str
    text: str
    # The action link, written to the log in development.
    link: str | None = None


def build(outgoing: Outgoing, *, mail_from: str, now: datetime) -> bytes:
    msg = EmailMessage(policy=SMTP)
    msg["From"] = mail_from
    msg["To"] = outgoing.to
    msg["Subject"] = outgoing.subject
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = make_msgid(domain=mail_from.rpartition("@")[2] or None)
    msg["Auto-Submitted"] = "auto-generated"  # RFC 3834: no auto-replies to these
    msg.set_content(outgoing.text)
    return msg.as_bytes()


def verification(to: str, link: str, *, change: bool) -> Outgoing:
    what = "your new email address" if change else "your email address"
    return Outgoing(
        kind="verify_email",
        to=to,
        subject="Verify your email address",
        text=(
            f"Please confirm {what} by opening this link:\n\n{link}\n\n"
            "The link works once and expires in 24 hours. If you did not ask for"
            " this, ignore this message.\n"
        ),
        link=link,
    )


def password_reset(to: str, link: str) -> Outgoing:
    return Outgoing(
        kind="password_reset",
        to=to,
        subject="Reset your password",
        text=(
            f"Someone asked to reset the password of your account. To choose a new"
            f" password, open this link:\n\n{link}\n\nThe link works once and expires"
            " in 1 hour. If you did not ask for this, ignore this message; your"
            " password stays as it is.\n"
        ),
        link=link,
    )


def security_notice(to: str, what: str) -> Outgoing:
    return Outgoing(
        kind="security_notice",
        to=to,
        subject=f"Security notice: {what}",
        text=(
            f"This is a notice that on your account: {what}.\n\n"
            "If this was you, there is nothing to do. If it was not, reset your"
            " password now and review your active sessions.\n"
        ),
    )


def mailbox_recovery(to: str, mailbox: str, link: str, *, minutes: int) -> Outgoing:
    """To a mailbox's recovery address (mail/recovery/): the one-time reset link."""
    return Outgoing(
        kind="mailbox_recovery",
        to=to,
        subject=f"Reset the password of {mailbox}",
        text=(
            f"Someone asked to reset the password of the mailbox {mailbox}, which"
            f" names this address for recovery. To choose a new password, open this"
            f" link:\n\n{link}\n\nThe link works once and expires in {minutes} minutes."
            " If you did not ask for this, ignore this message; the password stays"
            " as it is.\n"
        ),
        link=link,
    )


def mailbox_reset_notice(to: str, mailbox: str) -> Outgoing:
    return security_notice(
        to, f"the password of the mailbox {mailbox} was reset by its recovery link"
    )
