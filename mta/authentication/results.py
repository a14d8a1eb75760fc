"""The Authentication-Results header field (RFC 8601) and removal of forged ones."""

from __future__ import annotations

import re

from mta.authentication.dkim import DkimResult
from mta.authentication.dmarc import DmarcResult
from mta.authentication.spf import SpfResult

_UNSAFE = re.compile(r"[\x00-\x20\x7f;()\"\\]")


def _value(text: str) -> str:
    # Property values are tokens (UTF-8 allowed, RFC 8601 2.2): no spaces, controls,
    # comments, quotes or the ";" that separates results.
    return _UNSAFE.sub("", text)[:255] or "unknown"


def header(
    authserv_id: str,
    spf: SpfResult,
    dkim: list[DkimResult],
    dmarc: DmarcResult,
    mail_from: str,
    helo: str,
) -> bytes:
    parts = [authserv_id]
    if mail_from:
        parts.append(f"spf={spf.result} smtp.mailfrom={_value(mail_from)}")
    else:
        parts.append(f"spf={spf.result} smtp.helo={_value(helo)}")
    for d in dkim:
        if d.result == "none":
            parts.append("dkim=none")
        else:
            parts.append(
                f"dkim={d.result} header.d={_value(d.domain)} header.s={_value(d.selector)}"
            )
    if dmarc.result == "none":
        parts.append("dmarc=none")
    else:
        parts.append(f"dmarc={dmarc.result} (p={dmarc.policy}) header.from={_value(dmarc.domain)}")
    return ("Authentication-Results: " + ";\r\n\t".join(parts) + "\r\n").encode()


def strip_forged(raw: bytes, authserv_id: str) -> bytes:
    """Drop Authentication-Results fields that claim to be ours (RFC 8601 section 5)."""
    end = raw.find(b"\r\n\r\n")
    end = end + 2 if end >= 0 else raw.find(b"\n\n") + 1
    if end <= 0:
        return raw
    # head keeps its last line's end of line; body starts at the empty line.
    head, body = raw[:end], raw[end:]
    if b"authentication-results" not in head.lower():
        return raw
    lines = re.split(rb"(?<=\n)", head)
    kept: list[bytes] = []
    dropping = False
    ours = re.compile(
        rb"^authentication-results:\s*" + re.escape(authserv_id.encode()) + rb"\s*(;|$)",
        re.IGNORECASE,
    )
    for line in lines:
        if line[:1] in (b" ", b"\t"):
            if not dropping:
                kept.append(line)
            continue
        dropping = bool(ours.match(line))
        if not dropping:
            kept.append(line)
    return b"".join(kept) + body
