"""A draft as the RFC 5322 message the queue sends (stdlib ``email``, SMTP line endings).

Bcc never appears in the header (only in the envelope). The Message-ID is
``<email id@from domain>``, so a reply or a bounce quoting it names the email.
Tags stay out of the message: they are the API's and the events' (Resend).
"""

from __future__ import annotations

from datetime import datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime

from mail.sending.fields import Draft, Mailbox


def message_id(email_id: str, draft: Draft) -> str:
    return f"<{email_id}@{draft.sender.domain}>"


def _address(box: Mailbox) -> Address:
    local, _, domain = box.address.rpartition("@")
    return Address(display_name=box.name, username=local, domain=domain)


def build(email_id: str, draft: Draft, now: datetime) -> bytes:
    msg = EmailMessage(policy=SMTP)
    msg["From"] = _address(draft.sender)
    msg["To"] = [_address(b) for b in draft.to]
    if draft.cc:
        msg["Cc"] = [_address(b) for b in draft.cc]
    if draft.reply_to:
        msg["Reply-To"] = [_address(b) for b in draft.reply_to]
    msg["Subject"] = draft.subject
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = message_id(email_id, draft)
    for name, value in draft.headers.items():
        msg[name] = value
    if draft.text is not None:
        msg.set_content(draft.text)
        if draft.html is not None:
            msg.add_alternative(draft.html, subtype="html")
    else:
        msg.set_content(draft.html or "", subtype="html")
    for item in draft.attachments:
        maintype, _, subtype = item.content_type.partition("/")
        if item.content_id:
            # An inline image the html refers to as cid:<content_id>.
            msg.add_attachment(
                item.content, maintype, subtype, filename=item.filename,
                disposition="inline", cid=f"<{item.content_id}>",
            )  # fmt: skip
        else:
            msg.add_attachment(item.content, maintype, subtype, filename=item.filename)
    return msg.as_bytes()
