"""Delivery status notifications (RFC 3464): what a submission sender gets for a failure.

A multipart/report with a human-readable part, the machine-readable
message/delivery-status (one block per failed recipient: Final-Recipient,
Action, Status, Diagnostic-Code, Remote-MTA) and the original's header
(RFC 3462 text/rfc822-headers: the body may be large or private). It is
queued like any message, with an empty envelope sender (RFC 5321 4.5.5), so
a DSN that fails itself produces no other.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, make_msgid

STATUS = re.compile(r"\b([245]\.\d{1,3}\.\d{1,3})\b")


@dataclass(frozen=True)
class Failure:
    rcpt: str
    reply: str
    remote: str


def status_of(reply: str) -> str:
    """The enhanced status code in a reply, or a generic one by its class."""
    found = STATUS.search(reply)
    if found:
        return found.group(1)
    return "5.0.0" if reply[:1] == "5" else "4.0.0"


def build(
    *,
    reporting_host: str,
    mail_from: str,
    original_rcpt_from: str,
    failures: list[Failure],
    original: bytes,
    now: datetime,
) -> bytes:
    head = original.split(b"\r\n\r\n", 1)[0] + b"\r\n"
    subject_match = re.search(rb"^Subject:[ \t]*(.*)$", head, re.I | re.M)
    subject = subject_match.group(1).decode("utf-8", "replace").strip() if subject_match else ""

    lines = "\r\n".join(f"<{f.rcpt}>: {_one_line(f.reply)}" for f in failures)
    human = (
        f"This is the mail system at host {reporting_host}.\r\n\r\n"
        "Your message could not be delivered to one or more recipients.\r\n"
        "Its header is attached below.\r\n\r\n"
        f"{lines}\r\n"
    )
    fields = [f"Reporting-MTA: dns; {reporting_host}", f"Arrival-Date: {format_datetime(now)}", ""]
    for failure in failures:
        fields += [
            f"Final-Recipient: rfc822; {failure.rcpt}",
            "Action: failed",
            f"Status: {status_of(failure.reply)}",
        ]
        if failure.remote:
            fields.append(f"Remote-MTA: dns; {failure.remote}")
        fields += [f"Diagnostic-Code: smtp; {_one_line(failure.reply)}", ""]

    outer = EmailMessage(policy=SMTP)
    outer["From"] = f"Mail Delivery System <{mail_from}>"
    outer["To"] = original_rcpt_from
    outer["Subject"] = "Undelivered Mail Returned to Sender" + (f": {subject}" if subject else "")
    outer["Date"] = format_datetime(now)
    outer["Message-ID"] = make_msgid(domain=reporting_host)
    outer["Auto-Submitted"] = "auto-replied"  # RFC 3834: no auto-reply to it
    outer["MIME-Version"] = "1.0"
    boundary = f"=_dsn_{secrets.token_hex(12)}"
    outer["Content-Type"] = f'multipart/report; report-type=delivery-status; boundary="{boundary}"'
    parts = [
        b"Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
        + human.encode(),
        b"Content-Type: message/delivery-status\r\n\r\n" + "\r\n".join(fields).encode(),
        b"Content-Type: text/rfc822-headers\r\n\r\n" + head,
    ]
    body = b"".join(b"--" + boundary.encode() + b"\r\n" + part + b"\r\n" for part in parts)
    body += b"--" + boundary.encode() + b"--\r\n"
    return bytes(outer).split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n" + body


def _one_line(text: str) -> str:
    return " ".join(text.split())[:900]
