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
    """Drop every Authentication-Results field that claims to be ours (RFC 8601 section 5).

    However it is written: any case of the name, whitespace before the colon
    (RFC 5322 4.5.8's obsolete syntax, which receivers still parse), the field
    folded over several lines, comments before the authserv-id, a quoted
    authserv-id, a version after it, a trailing dot. A field is kept only when
    the authserv-id it names is plainly another one; one that names none (an
    unreadable value) is dropped too, as section 5 allows, since no reader can
    tell whose it is.
    """
    end = raw.find(b"\r\n\r\n")
    end = end + 2 if end >= 0 else raw.find(b"\n\n") + 1
    if end <= 0:
        return raw
    # head keeps its last line's end of line; body starts at the empty line.
    head, body = raw[:end], raw[end:]
    if b"authentication-results" not in head.lower():
        return raw
    ours = authserv_id.lower()
    kept = []
    for field in _FIELDS.split(head):
        name = _AR_NAME.match(field)
        if name is not None:
            value = _FOLD.sub(b"", field[name.end() :]).decode("utf-8", "surrogateescape")
            if _claimed_id(value).rstrip(".") in ("", ours.rstrip(".")):
                continue
        kept.append(field)
    return b"".join(kept) + body


# A field starts at a line that does not start with whitespace; the lines that do
# are its folded continuation (RFC 5322 2.2.3).
_FIELDS = re.compile(rb"(?<=\n)(?=[^ \t])")
_AR_NAME = re.compile(rb"authentication-results[ \t]*:", re.IGNORECASE)
_FOLD = re.compile(rb"\r?\n(?=[ \t])")


def _claimed_id(value: str) -> str:
    """The authserv-id a field value names (RFC 8601 2.2: [CFWS] value), lower-case."""
    i, n = 0, len(value)
    while i < n:  # CFWS: whitespace and (nested) comments
        if value[i] in " \t\r\n":
            i += 1
        elif value[i] == "(":
            depth = 0
            while i < n:
                if value[i] == "\\":
                    i += 1
                elif value[i] == "(":
                    depth += 1
                elif value[i] == ")":
                    depth -= 1
                    if depth == 0:
                        i += 1
                        break
                i += 1
        else:
            break
    if value[i : i + 1] == '"':  # quoted-string
        out = []
        i += 1
        while i < n and value[i] != '"':
            if value[i] == "\\":
                i += 1
            out.append(value[i : i + 1])
            i += 1
        return "".join(out).lower()
    match = _TOKEN.match(value, i)
    return match.group(0).lower() if match else ""


_TOKEN = re.compile(r"[^\s;()\"]+")
