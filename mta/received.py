"""The Received trace field (RFC 5321 4.4) this server prepends to every message."""

from __future__ import annotations

import email.utils
import re
from datetime import datetime

_UNSAFE = re.compile(r"[^\x21-\x7e]")


def protocol(*, esmtp: bool, tls: bool, smtputf8: bool) -> str:
    """The WITH keyword: SMTP, ESMTP, ESMTPS, UTF8SMTP or UTF8SMTPS (RFC 3848, 6531)."""
    if not esmtp:
        return "SMTP"
    base = "UTF8SMTP" if smtputf8 else "ESMTP"
    return base + ("S" if tls else "")


def header(
    *,
    helo: str,
    ip: str,
    hostname: str,
    with_: str,
    queue_id: str,
    recipients: list[str],
    now: datetime,
    trace: str | None = None,
) -> bytes:
    helo_token = _UNSAFE.sub("", helo)[:255] or "unknown"
    lines = [
        f"Received: from {helo_token} ([{ip}])",
        f"\tby {hostname} (mta) with {with_} id {queue_id}{_trace(trace)}",
    ]
    # Like Postfix, name the recipient only when there is one (no leak of Bcc lists).
    if len(recipients) == 1:
        lines.append(f"\tfor <{recipients[0]}>; {email.utils.format_datetime(now)}")
    else:
        lines[-1] += f"; {email.utils.format_datetime(now)}"
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")


def queued(*, hostname: str, queue_id: str, trace: str, now: datetime) -> bytes:
    """The field the outbound worker adds to mail queued over HTTP or by a job.

    No ``from`` clause: the message was written here (the sending API,
    webmail, JMAP, a DSN); the comment names the request that queued it.
    """
    return (
        f"Received: by {hostname} (mta) id {queue_id}{_trace(trace)};\r\n"
        f"\t{email.utils.format_datetime(now)}\r\n"
    ).encode()


def _trace(trace: str | None) -> str:
    # A comment (RFC 5322 CFWS); request ids are plain tokens (common/logs.py).
    return f" (trace {_UNSAFE.sub('', trace).replace('(', '').replace(')', '')})" if trace else ""
